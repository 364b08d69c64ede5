"""SyncGroup (key 14): the leader hands out assignments, every member gets its own; v0-5."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BYTES, INT16, INT32, STRING

REQUEST = Message(
    "SyncGroupRequest",
    versions="0-5",
    flexible="4+",
    fields=[
        Field("group_id", STRING),
        Field("generation_id", INT32),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, "3+", nullable="3+"),
        Field("protocol_type", STRING, "5+", nullable="5+"),
        Field("protocol_name", STRING, "5+", nullable="5+"),
        Field(
            "assignments",
            Array([
                Field("member_id", STRING),
                Field("assignment", BYTES),
            ]),
        ),
    ],
)

RESPONSE = Message(
    "SyncGroupResponse",
    versions="0-5",
    flexible="4+",
    fields=[
        Field("throttle_time_ms", INT32, "1+"),
        Field("error_code", INT16),
        Field("protocol_type", STRING, "5+", nullable="5+"),
        Field("protocol_name", STRING, "5+", nullable="5+"),
        Field("assignment", BYTES),
    ],
)

API = Api(14, "SyncGroup", REQUEST, RESPONSE)
