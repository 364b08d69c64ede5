"""DeleteGroups (key 42): delete empty consumer groups; v0-2."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, STRING

REQUEST = Message(
    "DeleteGroupsRequest",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("groups_names", Array(STRING)),
    ],
)

RESPONSE = Message(
    "DeleteGroupsResponse",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array([
                Field("group_id", STRING),
                Field("error_code", INT16),
            ]),
        ),
    ],
)

API = Api(42, "DeleteGroups", REQUEST, RESPONSE)
