"""ListGroups (key 16): the groups a broker coordinates; v0-5 (v4 filters by state, v5 by
group type and answers each group's type: "classic" or "consumer")."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, STRING

REQUEST = Message(
    "ListGroupsRequest",
    versions="0-5",
    flexible="3+",
    fields=[
        Field("states_filter", Array(STRING), "4+"),
        Field("types_filter", Array(STRING), "5+"),
    ],
)

RESPONSE = Message(
    "ListGroupsResponse",
    versions="0-5",
    flexible="3+",
    fields=[
        Field("throttle_time_ms", INT32, "1+"),
        Field("error_code", INT16),
        Field(
            "groups",
            Array([
                Field("group_id", STRING),
                Field("protocol_type", STRING),
                Field("group_state", STRING, "4+"),
                Field("group_type", STRING, "5+"),
            ]),
        ),
    ],
)

API = Api(16, "ListGroups", REQUEST, RESPONSE)
