"""The records a KIP-848 consumer group leaves in `__consumer_offsets`, in Kafka's layout.

Like the classic records in `formats`, a key is an int16 followed by its fields, where the int16
is the record type, and a value is an int16 version (0) followed by a flexible struct. One group's
records (all in its `__consumer_offsets` partition):

    type  key                       value
    3     group                     ConsumerGroupMetadata: the group epoch
    4     group                     ConsumerGroupPartitionMetadata: the subscribed topics' ids and
                                    partition counts (Kafka 4.0; 4.1 keeps a hash in record 3
                                    instead and tombstones this one)
    5     group, member id          ConsumerGroupMemberMetadata: who the member is, what it
                                    subscribes to
    6     group                     ConsumerGroupTargetAssignmentMetadata: the assignment epoch
    7     group, member id          ConsumerGroupTargetAssignmentMember: the member's target
    8     group, member id          ConsumerGroupCurrentMemberAssignment: the member's epochs,
                                    state, assigned partitions and partitions pending revocation

A member leaves with tombstones of 8, 7 and 5 (in that order, as Kafka writes them); a deleted
group with those of every member, then 6, 4 and 3.
"""

from __future__ import annotations

import uuid

from trafka.broker.coordinators.runtime.group_records import GroupRecordKey, GroupRecordLayout
from trafka.broker.coordinators.runtime.records import parse_versioned, versioned
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BYTES, INT8, INT32, INT64, STRING, UUID

GROUP_METADATA = 3
PARTITION_METADATA = 4
MEMBER_METADATA = 5
TARGET_ASSIGNMENT_METADATA = 6
TARGET_ASSIGNMENT_MEMBER = 7
CURRENT_MEMBER_ASSIGNMENT = 8
RECORD_TYPES = range(GROUP_METADATA, CURRENT_MEMBER_ASSIGNMENT + 1)
MEMBER_RECORD_TYPES = (MEMBER_METADATA, TARGET_ASSIGNMENT_MEMBER, CURRENT_MEMBER_ASSIGNMENT)

VALUE_VERSION = 0

# Kafka's MemberState byte values.
MEMBER_STATE_CODES = {"Stable": 0, "UnrevokedPartitions": 1, "UnreleasedPartitions": 2}
MEMBER_STATE_NAMES = {code: name for name, code in MEMBER_STATE_CODES.items()}


_GROUP_KEY = [Field("group", STRING)]
_MEMBER_KEY = [Field("group", STRING), Field("member_id", STRING)]
KEYS = {
    GROUP_METADATA: Message("ConsumerGroupMetadataKey", "3", "none", _GROUP_KEY),
    PARTITION_METADATA: Message("ConsumerGroupPartitionMetadataKey", "4", "none", _GROUP_KEY),
    MEMBER_METADATA: Message("ConsumerGroupMemberMetadataKey", "5", "none", _MEMBER_KEY),
    TARGET_ASSIGNMENT_METADATA: Message("ConsumerGroupTargetAssignmentMetadataKey", "6", "none", _GROUP_KEY),
    TARGET_ASSIGNMENT_MEMBER: Message("ConsumerGroupTargetAssignmentMemberKey", "7", "none", _MEMBER_KEY),
    CURRENT_MEMBER_ASSIGNMENT: Message("ConsumerGroupCurrentMemberAssignmentKey", "8", "none", _MEMBER_KEY),
}

_TOPIC_PARTITIONS = Array([Field("topic_id", UUID), Field("partitions", Array(INT32))])

VALUES = {
    GROUP_METADATA: Message("ConsumerGroupMetadataValue", "0", "0+", [
        Field("epoch", INT32),
        # Kafka 4.1 (KIP-1101): a hash of the subscribed topics' metadata; 0 = not computed.
        Field("metadata_hash", INT64, tag=0, tagged="0+", default=0),
    ]),
    PARTITION_METADATA: Message("ConsumerGroupPartitionMetadataValue", "0", "0+", [
        Field("topics", Array([
            Field("topic_id", UUID),
            Field("topic_name", STRING),
            Field("num_partitions", INT32),
            Field("partition_metadata", Array([Field("partition", INT32), Field("racks", Array(STRING))])),
        ])),
    ]),
    MEMBER_METADATA: Message("ConsumerGroupMemberMetadataValue", "0", "0+", [
        Field("instance_id", STRING, nullable="0+"),
        Field("rack_id", STRING, nullable="0+"),
        Field("client_id", STRING),
        Field("client_host", STRING),
        Field("subscribed_topic_names", Array(STRING)),
        Field("subscribed_topic_regex", STRING, nullable="0+"),
        Field("rebalance_timeout_ms", INT32, default=-1),
        Field("server_assignor", STRING, nullable="0+"),
        # Set for a member that speaks the classic protocol in this group (online migration).
        Field("classic_member_metadata", [
            Field("session_timeout_ms", INT32),
            Field("supported_protocols", Array([Field("name", STRING), Field("metadata", BYTES)])),
        ], nullable="0+", tag=0, tagged="0+", default=None),
    ]),
    TARGET_ASSIGNMENT_METADATA: Message("ConsumerGroupTargetAssignmentMetadataValue", "0", "0+", [
        Field("assignment_epoch", INT32),
    ]),
    TARGET_ASSIGNMENT_MEMBER: Message("ConsumerGroupTargetAssignmentMemberValue", "0", "0+", [
        Field("topic_partitions", _TOPIC_PARTITIONS),
    ]),
    CURRENT_MEMBER_ASSIGNMENT: Message("ConsumerGroupCurrentMemberAssignmentValue", "0", "0+", [
        Field("member_epoch", INT32),
        Field("previous_member_epoch", INT32),
        Field("state", INT8),
        Field("assigned_partitions", _TOPIC_PARTITIONS),
        Field("partitions_pending_revocation", _TOPIC_PARTITIONS),
    ]),
}


class ConsumerGroupRecordKey(GroupRecordKey):
    """The key of one of a consumer group's records: its type (3-8), the group and, for the
    per-member types (5, 7, 8), the member id."""


# Kafka's order within one change: member metadata, subscription metadata, group epoch, target
# members, target epoch, current assignments; on the way out members first, the group last.
LAYOUT = GroupRecordLayout(
    KEYS, ConsumerGroupRecordKey,
    upsert_order=(MEMBER_METADATA, PARTITION_METADATA, GROUP_METADATA, TARGET_ASSIGNMENT_MEMBER,
                  TARGET_ASSIGNMENT_METADATA, CURRENT_MEMBER_ASSIGNMENT),
    tombstone_order=(CURRENT_MEMBER_ASSIGNMENT, TARGET_ASSIGNMENT_MEMBER, MEMBER_METADATA, TARGET_ASSIGNMENT_METADATA,
                     PARTITION_METADATA, GROUP_METADATA))
key = LAYOUT.key
parse_key = LAYOUT.parse_key


def value(record_type: int, fields: dict) -> bytes:
    return versioned(VALUES[record_type], VALUE_VERSION, fields)


def parse_value(record_type: int, data: bytes):
    """The value's fields (attribute access); UnknownRecord for a version this broker does not
    know or bytes it cannot read."""
    return parse_versioned(data, VALUES[record_type])


def topic_partitions(assignment: dict[uuid.UUID, frozenset[int]]) -> list[dict]:
    """An assignment (topic id -> partitions) as the records' TopicPartitions array."""
    return [{"topic_id": topic_id, "partitions": sorted(partitions)} for topic_id, partitions in sorted(assignment.items())]


def assignment_from(entries) -> dict[uuid.UUID, frozenset[int]]:
    """The records' TopicPartitions array as an assignment, without empty topics."""
    out: dict[uuid.UUID, frozenset[int]] = {}
    for entry in entries:
        partitions = out.get(entry.topic_id, frozenset()) | frozenset(entry.partitions)
        if partitions:
            out[entry.topic_id] = partitions
    return out
