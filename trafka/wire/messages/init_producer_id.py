"""InitProducerId (key 22): a producer id and epoch for idempotent or transactional producers; v0-6.

v3+ lets a producer with an id and epoch ask for a bumped epoch, v4 adds PRODUCER_FENCED, v5
TRANSACTION_ABORTABLE (KIP-890). v6 adds two-phase commit (KIP-939): Enable2Pc / KeepPreparedTxn, and the ongoing
transaction's producer id and epoch in the answer.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Field, Message
from trafka.wire.types import BOOL, INT16, INT32, INT64, STRING

REQUEST = Message(
    "InitProducerIdRequest",
    versions="0-6",
    flexible="2+",
    fields=[
        Field("transactional_id", STRING, nullable="0+"),
        Field("transaction_timeout_ms", INT32),
        Field("producer_id", INT64, "3+", default=-1),
        Field("producer_epoch", INT16, "3+", default=-1),
        Field("enable_2pc", BOOL, "6+", default=False),
        Field("keep_prepared_txn", BOOL, "6+", default=False),
    ],
)

RESPONSE = Message(
    "InitProducerIdResponse",
    versions="0-6",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("producer_id", INT64, default=-1),
        Field("producer_epoch", INT16),
        Field("ongoing_txn_producer_id", INT64, "6+", default=-1),
        Field("ongoing_txn_producer_epoch", INT16, "6+", default=-1),
    ],
)

API = Api(22, "InitProducerId", REQUEST, RESPONSE)
