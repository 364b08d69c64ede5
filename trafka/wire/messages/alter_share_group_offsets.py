"""AlterShareGroupOffsets (key 91): set an empty share group's share-partition start offsets
(KIP-932, Admin.alterShareGroupOffsets, kafka-share-groups.sh --reset-offsets); v0."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, INT64, STRING, UUID

REQUEST = Message(
    "AlterShareGroupOffsetsRequest",
    versions="0",
    flexible="0+",
    fields=[
        Field("group_id", STRING),
        Field("topics", Array([
            Field("topic_name", STRING),
            Field("partitions", Array([
                Field("partition_index", INT32),
                Field("start_offset", INT64),
            ])),
        ])),
    ],
)

RESPONSE = Message(
    "AlterShareGroupOffsetsResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("responses", Array([
            Field("topic_name", STRING),
            Field("topic_id", UUID),
            Field("partitions", Array([
                Field("partition_index", INT32),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
            ])),
        ])),
    ],
)

API = Api(91, "AlterShareGroupOffsets", REQUEST, RESPONSE)
