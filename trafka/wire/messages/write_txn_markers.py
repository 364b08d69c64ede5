"""WriteTxnMarkers (key 27): write COMMIT/ABORT markers to partitions; v1-2.

Kafka's coordinators send it to partition leaders; admin tools send it to abort a hanging
transaction (`kafka-transactions.sh abort`). v0 was removed in Kafka 4.0; v2 (KIP-1228) adds
each marker's transaction version (0/1 legacy, 2 for KIP-890 transactions).
"""

from trafka.wire.api import Api
from trafka.wire.fields import by_topic, partition_errors
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT8, INT16, INT32, INT64, STRING

REQUEST = Message(
    "WriteTxnMarkersRequest",
    versions="1-2",
    flexible="1+",
    fields=[
        Field(
            "markers",
            Array([
                Field("producer_id", INT64),
                Field("producer_epoch", INT16),
                Field("transaction_result", BOOL),
                Field("topics", Array([Field("name", STRING), Field("partition_indexes", Array(INT32))])),
                Field("coordinator_epoch", INT32),
                Field("transaction_version", INT8, "2+", default=0),
            ]),
        ),
    ],
)

RESPONSE = Message(
    "WriteTxnMarkersResponse",
    versions="1-2",
    flexible="1+",
    fields=[
        Field(
            "markers",
            Array([
                Field("producer_id", INT64),
                by_topic(partition_errors()),
            ]),
        ),
    ],
)

API = Api(27, "WriteTxnMarkers", REQUEST, RESPONSE)
