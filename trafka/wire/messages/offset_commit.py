"""OffsetCommit (key 8): a group's committed offsets; v2-10.

A committed offset is the next offset to read. retention_time_ms exists only in v2-4. v9 is the
same message as v8; it is the first a member of a KIP-848 consumer group may use (the generation
field then carries its member epoch) and may answer STALE_MEMBER_EPOCH and GROUP_ID_NOT_FOUND. v10 names topics by id instead of by
name (KIP-848) and may answer UNKNOWN_TOPIC_ID.
"""

from trafka.wire.api import Api
from trafka.wire.fields import committed_offset, partition_errors
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT32, INT64, STRING, UUID



def _topic(partition_fields: list[Field]) -> list[Field]:
    """A topic by name up to v9, by id from v10."""
    return [Field("name", STRING, "0-9"), Field("topic_id", UUID, "10+"), Field("partitions", Array(partition_fields))]


REQUEST = Message(
    "OffsetCommitRequest",
    versions="2-10",
    flexible="8+",
    fields=[
        Field("group_id", STRING),
        Field("generation_id_or_member_epoch", INT32, default=-1),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, "7+", nullable="7+"),
        Field("retention_time_ms", INT64, "2-4", default=-1),
        Field("topics", Array(_topic(committed_offset("6+")))),
    ],
)

RESPONSE = Message(
    "OffsetCommitResponse",
    versions="2-10",
    flexible="8+",
    fields=[
        Field("throttle_time_ms", INT32, "3+"),
        Field("topics", Array(_topic(partition_errors()))),
    ],
)

API = Api(8, "OffsetCommit", REQUEST, RESPONSE)
