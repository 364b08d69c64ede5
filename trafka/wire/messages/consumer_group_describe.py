"""ConsumerGroupDescribe (key 69): state, epochs and members of KIP-848 consumer groups; v0-1.

Each member comes with its current and its target assignment (topic id, name and partitions).
v1 adds each member's type: 0 a classic-protocol member of the group, 1 a consumer-protocol one.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT8, INT16, INT32, STRING, UUID

NO_AUTHORIZED_OPERATIONS = -(2**31)

ASSIGNMENT = [
    Field("topic_partitions", Array([
        Field("topic_id", UUID),
        Field("topic_name", STRING),
        Field("partitions", Array(INT32)),
    ])),
]

REQUEST = Message(
    "ConsumerGroupDescribeRequest",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("group_ids", Array(STRING)),
        Field("include_authorized_operations", BOOL),
    ],
)

RESPONSE = Message(
    "ConsumerGroupDescribeResponse",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "groups",
            Array([
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
                Field("group_id", STRING),
                Field("group_state", STRING),
                Field("group_epoch", INT32),
                Field("assignment_epoch", INT32),
                Field("assignor_name", STRING),
                Field(
                    "members",
                    Array([
                        Field("member_id", STRING),
                        Field("instance_id", STRING, nullable="0+", default=None),
                        Field("rack_id", STRING, nullable="0+", default=None),
                        Field("member_epoch", INT32),
                        Field("client_id", STRING),
                        Field("client_host", STRING),
                        Field("subscribed_topic_names", Array(STRING)),
                        Field("subscribed_topic_regex", STRING, nullable="0+", default=None),
                        Field("assignment", ASSIGNMENT),
                        Field("target_assignment", ASSIGNMENT),
                        Field("member_type", INT8, "1+", default=-1),
                    ]),
                ),
                Field("authorized_operations", INT32, default=NO_AUTHORIZED_OPERATIONS),
            ]),
        ),
    ],
)

API = Api(69, "ConsumerGroupDescribe", REQUEST, RESPONSE)
