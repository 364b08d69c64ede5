"""OffsetForLeaderEpoch (key 23): the end offset of a leader epoch per partition; v2-4.

Consumers use it to detect log truncation after a leader change (KIP-320). v2 carries the
current leader epoch for fencing, v3 the replica id (-1 consumer, -2 debug), v4 is flexible.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, INT64, STRING

REQUEST = Message(
    "OffsetForLeaderEpochRequest",
    versions="2-4",
    flexible="4+",
    fields=[
        Field("replica_id", INT32, "3+", default=-2),
        Field(
            "topics",
            Array([
                Field("topic", STRING),
                Field(
                    "partitions",
                    Array([
                        Field("partition", INT32),
                        Field("current_leader_epoch", INT32, default=-1),
                        Field("leader_epoch", INT32),
                    ]),
                ),
            ]),
        ),
    ],
)

RESPONSE = Message(
    "OffsetForLeaderEpochResponse",
    versions="2-4",
    flexible="4+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array([
                Field("topic", STRING),
                Field(
                    "partitions",
                    Array([
                        Field("error_code", INT16),
                        Field("partition", INT32),
                        Field("leader_epoch", INT32, default=-1),
                        Field("end_offset", INT64, default=-1),
                    ]),
                ),
            ]),
        ),
    ],
)

API = Api(23, "OffsetForLeaderEpoch", REQUEST, RESPONSE)
