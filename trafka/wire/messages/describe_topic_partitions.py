"""DescribeTopicPartitions (key 75): topics and their partitions, paged by a cursor (KIP-966); v0."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT16, INT32, STRING, UUID

CURSOR = [
    Field("topic_name", STRING),
    Field("partition_index", INT32),
]

REQUEST = Message(
    "DescribeTopicPartitionsRequest",
    versions="0",
    flexible="0+",
    fields=[
        Field("topics", Array([Field("name", STRING)])),
        Field("response_partition_limit", INT32, default=2000),
        Field("cursor", CURSOR, nullable="0+", default=None),
    ],
)

RESPONSE = Message(
    "DescribeTopicPartitionsResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array([
                Field("error_code", INT16),
                Field("name", STRING, nullable="0+"),
                Field("topic_id", UUID),
                Field("is_internal", BOOL, default=False),
                Field(
                    "partitions",
                    Array([
                        Field("error_code", INT16),
                        Field("partition_index", INT32),
                        Field("leader_id", INT32),
                        Field("leader_epoch", INT32, default=-1),
                        Field("replica_nodes", Array(INT32)),
                        Field("isr_nodes", Array(INT32)),
                        Field("eligible_leader_replicas", Array(INT32), nullable="0+", default=None),
                        Field("last_known_elr", Array(INT32), nullable="0+", default=None),
                        Field("offline_replicas", Array(INT32)),
                    ]),
                ),
                Field("topic_authorized_operations", INT32, default=-2147483648),
            ]),
        ),
        Field("next_cursor", CURSOR, nullable="0+", default=None),
    ],
)

API = Api(75, "DescribeTopicPartitions", REQUEST, RESPONSE)
