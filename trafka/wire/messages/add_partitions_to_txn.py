"""AddPartitionsToTxn (key 24): add partitions to a producer's transaction; v0-5.

v0-3 are the client versions: one transaction, its fields at the top (`v3_and_below_*`, Kafka's
names). v4+ are what brokers
send the transaction coordinator (KIP-890): several transactions per request, each either
adding its partitions or only verifying they are in the transaction (verify_only), and a
top-level error; v5 adds the TRANSACTION_ABORTABLE error.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT16, INT32, INT64, STRING

TOPIC = [Field("name", STRING), Field("partitions", Array(INT32))]
TOPIC_RESULT = [
    Field("name", STRING),
    Field("results_by_partition", Array([Field("partition_index", INT32), Field("partition_error_code", INT16)])),
]

REQUEST = Message(
    "AddPartitionsToTxnRequest",
    versions="0-5",
    flexible="3+",
    fields=[
        Field(
            "transactions",
            Array([
                Field("transactional_id", STRING),
                Field("producer_id", INT64),
                Field("producer_epoch", INT16),
                Field("verify_only", BOOL),
                Field("topics", Array(TOPIC)),
            ]),
            "4+",
        ),
        Field("v3_and_below_transactional_id", STRING, "0-3"),
        Field("v3_and_below_producer_id", INT64, "0-3"),
        Field("v3_and_below_producer_epoch", INT16, "0-3"),
        Field("v3_and_below_topics", Array(TOPIC), "0-3"),
    ],
)

RESPONSE = Message(
    "AddPartitionsToTxnResponse",
    versions="0-5",
    flexible="3+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, "4+"),
        Field(
            "results_by_transaction",
            Array([Field("transactional_id", STRING), Field("topic_results", Array(TOPIC_RESULT))]),
            "4+",
        ),
        Field("results_by_topic_v3_and_below", Array(TOPIC_RESULT), "0-3"),
    ],
)

API = Api(24, "AddPartitionsToTxn", REQUEST, RESPONSE)
