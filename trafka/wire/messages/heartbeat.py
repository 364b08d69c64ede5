"""Heartbeat (key 12): a member tells the coordinator it is alive; v0-4."""

from trafka.wire.api import Api
from trafka.wire.schema import Field, Message
from trafka.wire.types import INT16, INT32, STRING

REQUEST = Message(
    "HeartbeatRequest",
    versions="0-4",
    flexible="4+",
    fields=[
        Field("group_id", STRING),
        Field("generation_id", INT32),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, "3+", nullable="3+"),
    ],
)

RESPONSE = Message(
    "HeartbeatResponse",
    versions="0-4",
    flexible="4+",
    fields=[
        Field("throttle_time_ms", INT32, "1+"),
        Field("error_code", INT16),
    ],
)

API = Api(12, "Heartbeat", REQUEST, RESPONSE)
