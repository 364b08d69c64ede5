"""ShareGroupDescribe (key 77): share groups with their members and assignments; v1."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT16, INT32, STRING, UUID

ASSIGNMENT = [Field("topic_partitions", Array([
    Field("topic_id", UUID),
    Field("topic_name", STRING),
    Field("partitions", Array(INT32)),
]))]

REQUEST = Message(
    "ShareGroupDescribeRequest",
    versions="1",
    flexible="0+",
    fields=[
        Field("group_ids", Array(STRING)),
        Field("include_authorized_operations", BOOL),
    ],
)

RESPONSE = Message(
    "ShareGroupDescribeResponse",
    versions="1",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("groups", Array([
            Field("error_code", INT16),
            Field("error_message", STRING, nullable="0+", default=None),
            Field("group_id", STRING),
            Field("group_state", STRING),
            Field("group_epoch", INT32),
            Field("assignment_epoch", INT32),
            Field("assignor_name", STRING),
            Field("members", Array([
                Field("member_id", STRING),
                Field("rack_id", STRING, nullable="0+", default=None),
                Field("member_epoch", INT32),
                Field("client_id", STRING),
                Field("client_host", STRING),
                Field("subscribed_topic_names", Array(STRING)),
                Field("assignment", ASSIGNMENT),
            ])),
            Field("authorized_operations", INT32, default=-(2**31)),
        ])),
    ],
)

API = Api(77, "ShareGroupDescribe", REQUEST, RESPONSE)
