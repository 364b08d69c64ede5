"""OffsetDelete (key 47): delete a group's committed offsets for partitions; v0 (never flexible)."""

from trafka.wire.api import Api
from trafka.wire.fields import by_topic, partition_errors
from trafka.wire.schema import Field, Message
from trafka.wire.types import INT16, INT32, STRING

REQUEST = Message(
    "OffsetDeleteRequest",
    versions="0",
    flexible="none",
    fields=[
        Field("group_id", STRING),
        by_topic([Field("partition_index", INT32)]),
    ],
)

RESPONSE = Message(
    "OffsetDeleteResponse",
    versions="0",
    flexible="none",
    fields=[
        Field("error_code", INT16),
        Field("throttle_time_ms", INT32),
        by_topic(partition_errors()),
    ],
)

API = Api(47, "OffsetDelete", REQUEST, RESPONSE)
