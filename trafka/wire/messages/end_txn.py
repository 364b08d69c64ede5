"""EndTxn (key 26): commit or abort a transaction; v0-5.

v2 adds PRODUCER_FENCED, v3 is flexible, v4 adds TRANSACTION_ABORTABLE. v5 is the transaction
version 2 request (KIP-890 part 2): the response carries the producer id and epoch to use next.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Field, Message
from trafka.wire.types import BOOL, INT16, INT32, INT64, STRING

REQUEST = Message(
    "EndTxnRequest",
    versions="0-5",
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
    versions="0-5",
    flexible="3+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("producer_id", INT64, "5+", default=-1),
        Field("producer_epoch", INT16, "5+", default=-1),
    ],
)

API = Api(26, "EndTxn", REQUEST, RESPONSE)
