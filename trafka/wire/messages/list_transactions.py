"""ListTransactions (key 66): transactional ids by state and producer id; v0-2.

v1 adds a duration filter (KIP-994), v2 a transactional id pattern (KIP-1152).
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, INT64, STRING

REQUEST = Message(
    "ListTransactionsRequest",
    versions="0-2",
    flexible="0+",
    fields=[
        Field("state_filters", Array(STRING)),
        Field("producer_id_filters", Array(INT64)),
        Field("duration_filter", INT64, "1+", default=-1),
        Field("transactional_id_pattern", STRING, "2+", nullable="2+", default=None),
    ],
)

RESPONSE = Message(
    "ListTransactionsResponse",
    versions="0-2",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("unknown_state_filters", Array(STRING)),
        Field(
            "transaction_states",
            Array([
                Field("transactional_id", STRING),
                Field("producer_id", INT64),
                Field("transaction_state", STRING),
            ]),
        ),
    ],
)

API = Api(66, "ListTransactions", REQUEST, RESPONSE)
