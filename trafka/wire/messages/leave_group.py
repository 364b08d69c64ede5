"""LeaveGroup (key 13): members leave a group; v0-5.

Up to v2 one member per request; v3+ lists members (with static group instance ids).
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, STRING

REQUEST = Message(
    "LeaveGroupRequest",
    versions="0-5",
    flexible="4+",
    fields=[
        Field("group_id", STRING),
        Field("member_id", STRING, "0-2"),
        Field(
            "members",
            Array([
                Field("member_id", STRING),
                Field("group_instance_id", STRING, nullable="3+"),
                Field("reason", STRING, "5+", nullable="5+"),
            ]),
            "3+",
        ),
    ],
)

RESPONSE = Message(
    "LeaveGroupResponse",
    versions="0-5",
    flexible="4+",
    fields=[
        Field("throttle_time_ms", INT32, "1+"),
        Field("error_code", INT16),
        Field(
            "members",
            Array([
                Field("member_id", STRING),
                Field("group_instance_id", STRING, nullable="3+"),
                Field("error_code", INT16),
            ]),
            "3+",
        ),
    ],
)

API = Api(13, "LeaveGroup", REQUEST, RESPONSE)
