"""The records a share group leaves in `__consumer_offsets`, in Kafka's layout (KIP-932).

As with the KIP-848 consumer group records (coordinator/consumer_records.py), a key is an
int16 record type followed by its fields, and a value an int16 version (0) followed by a
flexible struct. One share group's records (all in its `__consumer_offsets` partition):

    type  key                  value
    10    group, member id     ShareGroupMemberMetadata: who the member is, what it subscribes to
    11    group                ShareGroupMetadata: the group epoch
    12    group                ShareGroupTargetAssignmentMetadata: the assignment epoch
    13    group, member id     ShareGroupTargetAssignmentMember: the member's target partitions
    14    group, member id     ShareGroupCurrentMemberAssignment: the member's epochs, state and
                               assigned partitions

(Type 15, ShareGroupStatePartitionMetadata, is not written: the share-partitions' state lives
in `__share_group_state` and is found there; docs/share-groups.md.)

The coordinator changes a copy of the group, and writes the difference between the values
last written for the group and `group_records(copy)` (`changes`, Kafka's order: members'
records, then the group's; on the way out members first, the group last) before the copy
replaces the group. `restore` builds a group from its records at load.
"""

from __future__ import annotations

import logging

from trafka.broker.coordinators.group.consumer_records import assignment_from, topic_partitions
from trafka.broker.coordinators.runtime.group_records import GroupRecordKey, GroupRecordLayout, RecordId, apply
from trafka.broker.coordinators.runtime.records import UnknownRecord, parse_versioned, versioned
from trafka.broker.coordinators.share.group import ShareGroup, ShareMember
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT8, INT32, INT64, STRING, UUID

log = logging.getLogger("trafka.share")

MEMBER_METADATA = 10
GROUP_METADATA = 11
TARGET_ASSIGNMENT_METADATA = 12
TARGET_ASSIGNMENT_MEMBER = 13
CURRENT_MEMBER_ASSIGNMENT = 14
RECORD_TYPES = range(MEMBER_METADATA, CURRENT_MEMBER_ASSIGNMENT + 1)
__all__ = ["apply", "changes", "group_records", "key", "parse_key", "restore", "ShareGroupRecordKey"]

VALUE_VERSION = 0
STABLE = 0  # Kafka's MemberState byte: a share member has no revocation step

_GROUP_KEY = [Field("group", STRING)]
_MEMBER_KEY = [Field("group", STRING), Field("member_id", STRING)]
KEYS = {
    MEMBER_METADATA: Message("ShareGroupMemberMetadataKey", "10", "none", _MEMBER_KEY),
    GROUP_METADATA: Message("ShareGroupMetadataKey", "11", "none", _GROUP_KEY),
    TARGET_ASSIGNMENT_METADATA: Message("ShareGroupTargetAssignmentMetadataKey", "12", "none", _GROUP_KEY),
    TARGET_ASSIGNMENT_MEMBER: Message("ShareGroupTargetAssignmentMemberKey", "13", "none", _MEMBER_KEY),
    CURRENT_MEMBER_ASSIGNMENT: Message("ShareGroupCurrentMemberAssignmentKey", "14", "none", _MEMBER_KEY),
}

_TOPIC_PARTITIONS = Array([Field("topic_id", UUID), Field("partitions", Array(INT32))])

VALUES = {
    MEMBER_METADATA: Message("ShareGroupMemberMetadataValue", "0", "0+", [
        Field("rack_id", STRING, nullable="0+"),
        Field("client_id", STRING),
        Field("client_host", STRING),
        Field("subscribed_topic_names", Array(STRING)),
    ]),
    GROUP_METADATA: Message("ShareGroupMetadataValue", "0", "0+", [
        Field("epoch", INT32),
        # Kafka 4.1: a hash of the subscribed topics' metadata; 0 = not computed.
        Field("metadata_hash", INT64, tag=0, tagged="0+", default=0),
    ]),
    TARGET_ASSIGNMENT_METADATA: Message("ShareGroupTargetAssignmentMetadataValue", "0", "0+", [
        Field("assignment_epoch", INT32),
    ]),
    TARGET_ASSIGNMENT_MEMBER: Message("ShareGroupTargetAssignmentMemberValue", "0", "0+", [
        Field("topic_partitions", _TOPIC_PARTITIONS),
    ]),
    CURRENT_MEMBER_ASSIGNMENT: Message("ShareGroupCurrentMemberAssignmentValue", "0", "0+", [
        Field("member_epoch", INT32),
        Field("previous_member_epoch", INT32),
        Field("state", INT8),
        Field("assigned_partitions", _TOPIC_PARTITIONS),
    ]),
}

class ShareGroupRecordKey(GroupRecordKey):
    """The key of one of a share group's records: its type (10-14), the group and, for the
    per-member types (10, 13, 14), the member id."""


LAYOUT = GroupRecordLayout(
    KEYS, ShareGroupRecordKey,
    upsert_order=(MEMBER_METADATA, GROUP_METADATA, TARGET_ASSIGNMENT_MEMBER, TARGET_ASSIGNMENT_METADATA,
                  CURRENT_MEMBER_ASSIGNMENT),
    tombstone_order=(CURRENT_MEMBER_ASSIGNMENT, TARGET_ASSIGNMENT_MEMBER, MEMBER_METADATA, TARGET_ASSIGNMENT_METADATA,
                     GROUP_METADATA))
key = LAYOUT.key
parse_key = LAYOUT.parse_key
changes = LAYOUT.changes  # the records that turn what was written into what is wanted, in Kafka's order


def _value(record_type: int, fields: dict) -> bytes:
    return versioned(VALUES[record_type], VALUE_VERSION, fields)


def group_records(group: ShareGroup) -> dict[RecordId, bytes]:
    """The record values that describe `group` as it is now."""
    out: dict[RecordId, bytes] = {
        (GROUP_METADATA, None): _value(GROUP_METADATA, {"epoch": group.group_epoch}),
        (TARGET_ASSIGNMENT_METADATA, None): _value(TARGET_ASSIGNMENT_METADATA, {"assignment_epoch": group.assignment_epoch}),
    }
    for member in group.members.values():
        out[(MEMBER_METADATA, member.member_id)] = _value(MEMBER_METADATA, {
            "rack_id": member.rack_id, "client_id": member.client_id, "client_host": member.client_host,
            "subscribed_topic_names": list(member.subscribed_topic_names)})
        partitions = topic_partitions(member.assignment)
        out[(TARGET_ASSIGNMENT_MEMBER, member.member_id)] = _value(TARGET_ASSIGNMENT_MEMBER, {"topic_partitions": partitions})
        out[(CURRENT_MEMBER_ASSIGNMENT, member.member_id)] = _value(CURRENT_MEMBER_ASSIGNMENT, {
            "member_epoch": member.member_epoch, "previous_member_epoch": member.previous_member_epoch,
            "state": STABLE, "assigned_partitions": partitions})
    return out


def restore(group_id: str, values: dict[RecordId, bytes], now: int, session_timeout_ms: int) -> ShareGroup | None:
    """The group its records describe (members' sessions start again now, as Kafka's onLoaded
    does); None when they hold no group metadata."""
    parsed = {}
    for rid, data in values.items():
        try:
            parsed[rid] = parse_versioned(data, VALUES[rid[0]])
        except UnknownRecord as exc:  # a value a newer Kafka wrote, or a damaged one
            log.warning("share group %s: skipping record type %d of member %s: %s", group_id, rid[0], rid[1], exc)
    if (GROUP_METADATA, None) not in parsed:
        return None
    group = ShareGroup(group_id, now, group_epoch=parsed[(GROUP_METADATA, None)].epoch)
    if (TARGET_ASSIGNMENT_METADATA, None) in parsed:
        group.assignment_epoch = parsed[(TARGET_ASSIGNMENT_METADATA, None)].assignment_epoch
    for (record_type, member_id), value in sorted(parsed.items(), key=lambda kv: (kv[0][1] or "", kv[0][0])):
        if record_type != MEMBER_METADATA:
            continue
        member = ShareMember(member_id, 0, value.client_id, value.client_host, value.rack_id,
                             tuple(value.subscribed_topic_names), now + session_timeout_ms)
        target = parsed.get((TARGET_ASSIGNMENT_MEMBER, member_id))
        current = parsed.get((CURRENT_MEMBER_ASSIGNMENT, member_id))
        if target is not None:
            member.assignment = assignment_from(target.topic_partitions)
        if current is not None:
            member.member_epoch, member.previous_member_epoch = current.member_epoch, current.previous_member_epoch
        group.members[member_id] = member
    return group

