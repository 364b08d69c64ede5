"""DescribeTransactions (key 65): the coordinator's view of transactional ids; v0."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, INT64, STRING

REQUEST = Message(
    "DescribeTransactionsRequest",
    versions="0",
    flexible="0+",
    fields=[Field("transactional_ids", Array(STRING))],
)

RESPONSE = Message(
    "DescribeTransactionsResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "transaction_states",
            Array([
                Field("error_code", INT16),
                Field("transactional_id", STRING),
                Field("transaction_state", STRING),
                Field("transaction_timeout_ms", INT32),
                Field("transaction_start_time_ms", INT64),
                Field("producer_id", INT64),
                Field("producer_epoch", INT16),
                Field("topics", Array([Field("name", STRING), Field("partition_indexes", Array(INT32))])),
            ]),
        ),
    ],
)

API = Api(65, "DescribeTransactions", REQUEST, RESPONSE)
