"""AddOffsetsToTxn (key 25): add a group's offsets partition to a transaction; v0-4.

v2 adds PRODUCER_FENCED, v3 is flexible, v4 adds TRANSACTION_ABORTABLE (KIP-890).
"""

from trafka.wire.api import Api
from trafka.wire.schema import Field, Message
from trafka.wire.types import INT16, INT32, INT64, STRING

REQUEST = Message(
    "AddOffsetsToTxnRequest",
    versions="0-4",
    flexible="3+",
    fields=[
        Field("transactional_id", STRING),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("group_id", STRING),
    ],
)

RESPONSE = Message(
    "AddOffsetsToTxnResponse",
    versions="0-4",
    flexible="3+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
    ],
)

API = Api(25, "AddOffsetsToTxn", REQUEST, RESPONSE)
