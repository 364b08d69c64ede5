"""DeleteShareGroupOffsets (key 92): forget an empty share group's state for whole topics, so
its next fetch starts again by share.auto.offset.reset (KIP-932,
Admin.deleteShareGroupOffsets, kafka-share-groups.sh --delete-offsets); v0."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, STRING, UUID

REQUEST = Message(
    "DeleteShareGroupOffsetsRequest",
    versions="0",
    flexible="0+",
    fields=[
        Field("group_id", STRING),
        Field("topics", Array([Field("topic_name", STRING)])),
    ],
)

RESPONSE = Message(
    "DeleteShareGroupOffsetsResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("responses", Array([
            Field("topic_name", STRING),
            Field("topic_id", UUID),
            Field("error_code", INT16),
            Field("error_message", STRING, nullable="0+", default=None),
        ])),
    ],
)

API = Api(92, "DeleteShareGroupOffsets", REQUEST, RESPONSE)
