"""Produce (key 0): record batches for partitions; declared v0-13.

v0-2 carry the old message formats; the broker answers them with UNSUPPORTED_VERSION but they
are declared so their requests still decode. v3 is the first record-batch (magic 2) version.
v10 adds the leader hints of KIP-951 (tagged, for NOT_LEADER_OR_FOLLOWER), v11 the
TRANSACTION_ABORTABLE error, v12 marks a transaction version 2 producer (KIP-890: the produce
adds its partition to the transaction) and v13 names topics by id (KIP-516).
"""

from trafka.wire.api import Api
from trafka.wire.fields import leader_hint, node_endpoints
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, INT64, RECORDS, STRING, UUID

REQUEST = Message(
    "ProduceRequest",
    versions="0-13",
    flexible="9+",
    fields=[
        Field("transactional_id", STRING, "3+", nullable="3+"),
        Field("acks", INT16),
        Field("timeout_ms", INT32),
        Field(
            "topic_data",
            Array([
                Field("name", STRING, "0-12"),
                Field("topic_id", UUID, "13+"),
                Field(
                    "partition_data",
                    Array([
                        Field("index", INT32),
                        Field("records", RECORDS, nullable="0+"),
                    ]),
                ),
            ]),
        ),
    ],
)

RESPONSE = Message(
    "ProduceResponse",
    versions="0-13",
    flexible="9+",
    fields=[
        Field(
            "responses",
            Array([
                Field("name", STRING, "0-12"),
                Field("topic_id", UUID, "13+"),
                Field(
                    "partition_responses",
                    Array([
                        Field("index", INT32),
                        Field("error_code", INT16),
                        Field("base_offset", INT64),
                        Field("log_append_time_ms", INT64, "2+", default=-1),
                        Field("log_start_offset", INT64, "5+", default=-1),
                        Field(
                            "record_errors",
                            Array([
                                Field("batch_index", INT32),
                                Field("batch_index_error_message", STRING, nullable="8+"),
                            ]),
                            "8+",
                        ),
                        Field("error_message", STRING, "8+", nullable="8+"),
                        leader_hint("10+", tag=0),
                    ]),
                ),
            ]),
        ),
        Field("throttle_time_ms", INT32, "1+"),
        node_endpoints("10+"),
    ],
)

API = Api(0, "Produce", REQUEST, RESPONSE)
