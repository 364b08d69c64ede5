"""JoinGroup (key 11): a member joins a consumer group; v0-9.

From v4 a first join with an empty member id is answered MEMBER_ID_REQUIRED with a member id
to rejoin with. v7 adds the protocol type to the response, v8 the join reason (KIP-800) to
the request, v9 SkipAssignment to the response (KIP-814).
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, BYTES, INT16, INT32, STRING

REQUEST = Message(
    "JoinGroupRequest",
    versions="0-9",
    flexible="6+",
    fields=[
        Field("group_id", STRING),
        Field("session_timeout_ms", INT32),
        Field("rebalance_timeout_ms", INT32, "1+", default=-1),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, "5+", nullable="5+"),
        Field("protocol_type", STRING),
        Field(
            "protocols",
            Array([
                Field("name", STRING),
                Field("metadata", BYTES),
            ]),
        ),
        Field("reason", STRING, "8+", nullable="8+", default=None),
    ],
)

RESPONSE = Message(
    "JoinGroupResponse",
    versions="0-9",
    flexible="6+",
    fields=[
        Field("throttle_time_ms", INT32, "2+"),
        Field("error_code", INT16),
        Field("generation_id", INT32, default=-1),
        Field("protocol_type", STRING, "7+", nullable="7+"),
        Field("protocol_name", STRING, nullable="7+"),
        Field("leader", STRING),
        Field("skip_assignment", BOOL, "9+"),
        Field("member_id", STRING),
        Field(
            "members",
            Array([
                Field("member_id", STRING),
                Field("group_instance_id", STRING, "5+", nullable="5+"),
                Field("metadata", BYTES),
            ]),
        ),
    ],
)

API = Api(11, "JoinGroup", REQUEST, RESPONSE)
