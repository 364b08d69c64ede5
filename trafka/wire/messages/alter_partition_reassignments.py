"""AlterPartitionReassignments (key 45): move partitions to other replicas (KIP-455); v0-1.

v1 adds allow_replication_factor_change (KIP-860).
"""

from trafka.wire.api import Api
from trafka.wire.fields import by_topic
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT16, INT32, STRING

REQUEST = Message(
    "AlterPartitionReassignmentsRequest",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("timeout_ms", INT32, default=60000),
        Field("allow_replication_factor_change", BOOL, "1+", default=True),
        by_topic([
            Field("partition_index", INT32),
            Field("replicas", Array(INT32), nullable="0+", default=None),
        ]),
    ],
)

RESPONSE = Message(
    "AlterPartitionReassignmentsResponse",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("allow_replication_factor_change", BOOL, "1+", default=True),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field(
            "responses",
            Array([
                Field("name", STRING),
                Field(
                    "partitions",
                    Array([
                        Field("partition_index", INT32),
                        Field("error_code", INT16),
                        Field("error_message", STRING, nullable="0+", default=None),
                    ]),
                ),
            ]),
        ),
    ],
)

API = Api(45, "AlterPartitionReassignments", REQUEST, RESPONSE)
