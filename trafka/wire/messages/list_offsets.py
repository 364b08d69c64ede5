"""ListOffsets (key 2): the offset for a timestamp per partition; v1-10.

Timestamps -1 (latest), -2 (earliest), from v7 -3 (max timestamp), from v8 -4 (earliest
local, KIP-405) and from v9 -5 (latest tiered, KIP-1005) are special; v10 adds a timeout for
remote (tiered) lookups (KIP-1075); v11 adds -6 (earliest pending upload, KIP-1023).
"""

from trafka.wire.api import Api
from trafka.wire.fields import by_topic
from trafka.wire.schema import Field, Message
from trafka.wire.types import INT8, INT16, INT32, INT64

REQUEST = Message(
    "ListOffsetsRequest",
    versions="1-11",
    flexible="6+",
    fields=[
        Field("replica_id", INT32, default=-1),
        Field("isolation_level", INT8, "2+"),
        by_topic([
            Field("partition_index", INT32),
            Field("current_leader_epoch", INT32, "4+", default=-1),
            Field("timestamp", INT64),
        ]),
        Field("timeout_ms", INT32, "10+"),
    ],
)

RESPONSE = Message(
    "ListOffsetsResponse",
    versions="1-11",
    flexible="6+",
    fields=[
        Field("throttle_time_ms", INT32, "2+"),
        by_topic([
            Field("partition_index", INT32),
            Field("error_code", INT16),
            Field("timestamp", INT64, default=-1),
            Field("offset", INT64, default=-1),
            Field("leader_epoch", INT32, "4+", default=-1),
        ]),
    ],
)

API = Api(2, "ListOffsets", REQUEST, RESPONSE)
