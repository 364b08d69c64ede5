"""ElectLeaders (key 43): preferred or unclean leader election for partitions; v0-2.

v1 adds the election type and the top-level error code; v2 is the first flexible version.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT8, INT16, INT32, STRING

REQUEST = Message(
    "ElectLeadersRequest",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("election_type", INT8, "1+", default=0),
        Field(
            "topic_partitions",
            Array([
                Field("topic", STRING),
                Field("partitions", Array(INT32)),
            ]),
            nullable="0+",
        ),
        Field("timeout_ms", INT32, default=60000),
    ],
)

RESPONSE = Message(
    "ElectLeadersResponse",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, "1+"),
        Field(
            "replica_election_results",
            Array([
                Field("topic", STRING),
                Field(
                    "partition_result",
                    Array([
                        Field("partition_id", INT32),
                        Field("error_code", INT16),
                        Field("error_message", STRING, nullable="0+"),
                    ]),
                ),
            ]),
        ),
    ],
)

API = Api(43, "ElectLeaders", REQUEST, RESPONSE)
