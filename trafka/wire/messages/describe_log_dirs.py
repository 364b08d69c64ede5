"""DescribeLogDirs (key 35): the log directories and the size of each partition in them; v1-5.

v2 is the first flexible version, v3 adds the top-level error code, v4 each directory's total
and usable bytes (KIP-827), v5 whether the directory is cordoned (never, here).
"""

from trafka.wire.api import Api
from trafka.wire.fields import by_topic
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT16, INT32, INT64, STRING

REQUEST = Message(
    "DescribeLogDirsRequest",
    versions="1-5",
    flexible="2+",
    fields=[
        Field(
            "topics",
            Array([
                Field("topic", STRING),
                Field("partitions", Array(INT32)),
            ]),
            nullable="1+",
        ),
    ],
)

RESPONSE = Message(
    "DescribeLogDirsResponse",
    versions="1-5",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, "3+"),
        Field(
            "results",
            Array([
                Field("error_code", INT16),
                Field("log_dir", STRING),
                by_topic([
                    Field("partition_index", INT32),
                    Field("partition_size", INT64),
                    Field("offset_lag", INT64),
                    Field("is_future_key", BOOL),
                ]),
                Field("total_bytes", INT64, "4+", default=-1),
                Field("usable_bytes", INT64, "4+", default=-1),
                Field("is_cordoned", BOOL, "5+", default=False),
            ]),
        ),
    ],
)

API = Api(35, "DescribeLogDirs", REQUEST, RESPONSE)
