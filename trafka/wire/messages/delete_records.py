"""DeleteRecords (key 21): move partitions' log start offsets up; v0-2."""

from trafka.wire.api import Api
from trafka.wire.fields import by_topic
from trafka.wire.schema import Field, Message
from trafka.wire.types import INT16, INT32, INT64

REQUEST = Message(
    "DeleteRecordsRequest",
    versions="0-2",
    flexible="2+",
    fields=[
        by_topic([Field("partition_index", INT32), Field("offset", INT64)]),
        Field("timeout_ms", INT32),
    ],
)

RESPONSE = Message(
    "DeleteRecordsResponse",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        by_topic([Field("partition_index", INT32), Field("low_watermark", INT64), Field("error_code", INT16)]),
    ],
)

API = Api(21, "DeleteRecords", REQUEST, RESPONSE)
