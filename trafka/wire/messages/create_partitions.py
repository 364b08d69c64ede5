"""CreatePartitions (key 37): grow topics to a new partition count; v0-3."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT16, INT32, STRING

REQUEST = Message(
    "CreatePartitionsRequest",
    versions="0-3",
    flexible="2+",
    fields=[
        Field(
            "topics",
            Array([
                Field("name", STRING),
                Field("count", INT32),
                Field("assignments", Array([Field("broker_ids", Array(INT32))]), nullable="0+"),
            ]),
        ),
        Field("timeout_ms", INT32),
        Field("validate_only", BOOL),
    ],
)

RESPONSE = Message(
    "CreatePartitionsResponse",
    versions="0-3",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array([
                Field("name", STRING),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+"),
            ]),
        ),
    ],
)

API = Api(37, "CreatePartitions", REQUEST, RESPONSE)
