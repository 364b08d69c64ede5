"""DescribeShareGroupOffsets (key 90): each share-partition's start offset, for
kafka-share-groups.sh --describe and Admin.listShareGroupOffsets; v0-1 (v1 adds the lag)."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, INT64, STRING, UUID

REQUEST = Message(
    "DescribeShareGroupOffsetsRequest",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("groups", Array([
            Field("group_id", STRING),
            Field("topics", Array([
                Field("topic_name", STRING),
                Field("partitions", Array(INT32)),
            ]), nullable="0+"),
        ])),
    ],
)

RESPONSE = Message(
    "DescribeShareGroupOffsetsResponse",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("groups", Array([
            Field("group_id", STRING),
            Field("topics", Array([
                Field("topic_name", STRING),
                Field("topic_id", UUID),
                Field("partitions", Array([
                    Field("partition_index", INT32),
                    Field("start_offset", INT64),
                    Field("leader_epoch", INT32),
                    Field("lag", INT64, "1+", default=-1),
                    Field("error_code", INT16),
                    Field("error_message", STRING, nullable="0+", default=None),
                ])),
            ])),
            Field("error_code", INT16),
            Field("error_message", STRING, nullable="0+", default=None),
        ])),
    ],
)

API = Api(90, "DescribeShareGroupOffsets", REQUEST, RESPONSE)
