"""EndTxn (key 26): commit or abort a transaction; v0-4.

v2 adds PRODUCER_FENCED, v3 is flexible, v4 adds TRANSACTION_ABORTABLE. v5 (KIP-890 part 2,
an epoch bump per transaction with the new id/epoch in the response) is not served.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Field, Message
from trafka.wire.types import BOOL, INT16, INT32, INT64, STRING

REQUEST = Message(
    "EndTxnRequest",
    versions="0-4",
    flexible="3+",
    fields=[
        Field("transactional_id", STRING),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("committed", BOOL),
    ],
)

RESPONSE = Message(
    "EndTxnResponse",
    versions="0-4",
    flexible="3+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
    ],
)

API = Api(26, "EndTxn", REQUEST, RESPONSE)
