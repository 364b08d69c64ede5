"""DescribeProducers (key 61): the producer state of partitions (idempotent and
transactional producers, their open transactions); v0."""

from trafka.wire.api import Api
from trafka.wire.fields import by_topic
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, INT64, STRING

REQUEST = Message(
    "DescribeProducersRequest",
    versions="0",
    flexible="0+",
    fields=[Field("topics", Array([Field("name", STRING), Field("partition_indexes", Array(INT32))]))],
)

RESPONSE = Message(
    "DescribeProducersResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        by_topic([
            Field("partition_index", INT32),
            Field("error_code", INT16),
            Field("error_message", STRING, nullable="0+", default=None),
            Field(
                "active_producers",
                Array([
                    Field("producer_id", INT64),
                    Field("producer_epoch", INT32),
                    Field("last_sequence", INT32, default=-1),
                    Field("last_timestamp", INT64, default=-1),
                    Field("coordinator_epoch", INT32),
                    Field("current_txn_start_offset", INT64, default=-1),
                ]),
            ),
        ]),
    ],
)

API = Api(61, "DescribeProducers", REQUEST, RESPONSE)
