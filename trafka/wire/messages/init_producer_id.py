"""InitProducerId (key 22): a producer id and epoch for idempotent or transactional producers; v0-5.

v3+ lets a producer with an id and epoch ask for a bumped epoch, v4 adds PRODUCER_FENCED, v5
TRANSACTION_ABORTABLE (KIP-890). v6 (two-phase commit, KIP-939) is not declared.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Field, Message
from trafka.wire.types import INT16, INT32, INT64, STRING

REQUEST = Message(
    "InitProducerIdRequest",
    versions="0-5",
    flexible="2+",
    fields=[
        Field("transactional_id", STRING, nullable="0+"),
        Field("transaction_timeout_ms", INT32),
        Field("producer_id", INT64, "3+", default=-1),
        Field("producer_epoch", INT16, "3+", default=-1),
    ],
)

RESPONSE = Message(
    "InitProducerIdResponse",
    versions="0-5",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("producer_id", INT64, default=-1),
        Field("producer_epoch", INT16),
    ],
)

API = Api(22, "InitProducerId", REQUEST, RESPONSE)
