"""OffsetCommit (key 8): a group's committed offsets; v2-9.

A committed offset is the next offset to read. retention_time_ms exists only in v2-4. v9 is the
same message as v8; it is the first a member of a KIP-848 consumer group may use (the generation
field then carries its member epoch) and may answer STALE_MEMBER_EPOCH and GROUP_ID_NOT_FOUND.
"""

from trafka.wire.api import Api
from trafka.wire.fields import by_topic, committed_offset, partition_errors
from trafka.wire.schema import Field, Message
from trafka.wire.types import INT32, INT64, STRING

REQUEST = Message(
    "OffsetCommitRequest",
    versions="2-9",
    flexible="8+",
    fields=[
        Field("group_id", STRING),
        Field("generation_id_or_member_epoch", INT32, default=-1),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, "7+", nullable="7+"),
        Field("retention_time_ms", INT64, "2-4", default=-1),
        by_topic(committed_offset("6+")),
    ],
)

RESPONSE = Message(
    "OffsetCommitResponse",
    versions="2-9",
    flexible="8+",
    fields=[
        Field("throttle_time_ms", INT32, "3+"),
        by_topic(partition_errors()),
    ],
)

API = Api(8, "OffsetCommit", REQUEST, RESPONSE)
