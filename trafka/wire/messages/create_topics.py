"""CreateTopics (key 19): create topics with partitions and configs; v2-7.

From v5 the response echoes the topic's partitions, replication factor and configs; v7 adds
the topic id.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT8, INT16, INT32, STRING, UUID

REQUEST = Message(
    "CreateTopicsRequest",
    versions="2-7",
    flexible="5+",
    fields=[
        Field(
            "topics",
            Array([
                Field("name", STRING),
                Field("num_partitions", INT32),
                Field("replication_factor", INT16),
                Field(
                    "assignments",
                    Array([
                        Field("partition_index", INT32),
                        Field("broker_ids", Array(INT32)),
                    ]),
                ),
                Field(
                    "configs",
                    Array([
                        Field("name", STRING),
                        Field("value", STRING, nullable="0+"),
                    ]),
                ),
            ]),
        ),
        Field("timeout_ms", INT32, default=60000),
        Field("validate_only", BOOL),
    ],
)

RESPONSE = Message(
    "CreateTopicsResponse",
    versions="2-7",
    flexible="5+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array([
                Field("name", STRING),
                Field("topic_id", UUID, "7+"),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+"),
                Field("topic_config_error_code", INT16, "5+", tag=0, tagged="5+"),
                Field("num_partitions", INT32, "5+", default=-1),
                Field("replication_factor", INT16, "5+", default=-1),
                Field(
                    "configs",
                    Array([
                        Field("name", STRING),
                        Field("value", STRING, nullable="5+"),
                        Field("read_only", BOOL),
                        Field("config_source", INT8, default=-1),
                        Field("is_sensitive", BOOL),
                    ]),
                    "5+",
                    nullable="5+",
                ),
            ]),
        ),
    ],
)

API = Api(19, "CreateTopics", REQUEST, RESPONSE)
