"""DeleteRecords (key 21): move partitions' log start offsets up; v0-2."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, INT64, STRING

REQUEST = Message(
    "DeleteRecordsRequest",
    versions="0-2",
    flexible="2+",
    fields=[
        Field(
            "topics",
            Array([
                Field("name", STRING),
                Field(
                    "partitions",
                    Array([
                        Field("partition_index", INT32),
                        Field("offset", INT64),
                    ]),
                ),
            ]),
        ),
        Field("timeout_ms", INT32),
    ],
)

RESPONSE = Message(
    "DeleteRecordsResponse",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array([
                Field("name", STRING),
                Field(
                    "partitions",
                    Array([
                        Field("partition_index", INT32),
                        Field("low_watermark", INT64),
                        Field("error_code", INT16),
                    ]),
                ),
            ]),
        ),
    ],
)

API = Api(21, "DeleteRecords", REQUEST, RESPONSE)
