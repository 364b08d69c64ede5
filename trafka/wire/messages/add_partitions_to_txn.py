"""AddPartitionsToTxn (key 24): add partitions to a producer's transaction; v0-3.

v0-3 are the client versions (Kafka: "Versions 3 and below will be exclusively used by
clients"); v4+ batch several transactions for broker-to-broker verification and v5 belongs to
transaction version 2 (KIP-890), neither served.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, INT64, STRING

REQUEST = Message(
    "AddPartitionsToTxnRequest",
    versions="0-3",
    flexible="3+",
    fields=[
        Field("transactional_id", STRING),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("topics", Array([Field("name", STRING), Field("partitions", Array(INT32))])),
    ],
)

RESPONSE = Message(
    "AddPartitionsToTxnResponse",
    versions="0-3",
    flexible="3+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results_by_topic",
            Array([
                Field("name", STRING),
                Field(
                    "results_by_partition",
                    Array([Field("partition_index", INT32), Field("partition_error_code", INT16)]),
                ),
            ]),
        ),
    ],
)

API = Api(24, "AddPartitionsToTxn", REQUEST, RESPONSE)
