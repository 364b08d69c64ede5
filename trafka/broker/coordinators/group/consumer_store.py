"""KIP-848 consumer groups in `__consumer_offsets`: written as they change, read back at start.

Kafka's coordinator turns every change into records (`consumer_records`: group epoch, subscribed
topics' metadata, member metadata, target assignment, current assignment) and replays them at
load. Here the `ConsumerGroupManager` changes a copy of the group and the coordinator writes
the difference: each shard keeps, per group, the record values last written; `group_records`
derives the values the copy needs and `changes` the records that turn one into the other (and
tombstones for what went), in Kafka's order, appended as one batch before the copy replaces
the group. So a member's epoch, assignment, target and subscription, the
group epoch and the assignment epoch survive a restart; sessions start again at load, as in
Kafka (`onLoaded`).

Where a change is written:
- after every ConsumerGroupHeartbeat (a write failure answers the heartbeat with the error);
- after the timer fenced members (session or rebalance timeout);
- when an empty classic group became a consumer group (the classic group's metadata record is
  tombstoned first, as Kafka's maybeDeleteEmptyClassicGroup does) and when an empty consumer
  group became a classic one at a JoinGroup (its records are tombstoned);
- when the group is deleted (`tombstones`, written with its offsets' tombstones).

`restore` builds a group from its records at load (shard.load_state).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from trafka.broker.coordinators.group import consumer_records as rec
from trafka.broker.coordinators.group.consumer_group import ClassicMetadata, ConsumerGroup, ConsumerMember, MemberState
from trafka.broker.coordinators.runtime import group_records as group_records_layout
from trafka.broker.coordinators.runtime.records import UnknownRecord

log = logging.getLogger("trafka.coordinator")

RecordId = group_records_layout.RecordId


def group_records(group: ConsumerGroup) -> dict[RecordId, bytes]:
    """The record values that describe `group` as it is now."""
    out: dict[RecordId, bytes] = {
        (rec.GROUP_METADATA, None): rec.value(rec.GROUP_METADATA, {"epoch": group.group_epoch}),
        (rec.PARTITION_METADATA, None): rec.value(rec.PARTITION_METADATA, {"topics": [
            {"topic_id": topic_id, "topic_name": name, "num_partitions": partitions, "partition_metadata": []}
            for name, (topic_id, partitions) in sorted(group.subscription_metadata.items())
        ]}),
        (rec.TARGET_ASSIGNMENT_METADATA, None): rec.value(rec.TARGET_ASSIGNMENT_METADATA,
                                                          {"assignment_epoch": group.assignment_epoch}),
    }
    for member in group.members.values():
        out[(rec.MEMBER_METADATA, member.member_id)] = rec.value(rec.MEMBER_METADATA, {
            "instance_id": member.instance_id,
            "rack_id": member.rack_id,
            "client_id": member.client_id,
            "client_host": member.client_host,
            "subscribed_topic_names": list(member.subscribed_topic_names),
            "subscribed_topic_regex": member.subscribed_topic_regex,
            "rebalance_timeout_ms": member.rebalance_timeout_ms,
            "server_assignor": member.server_assignor,
            "classic_member_metadata": None if member.classic is None else {
                "session_timeout_ms": member.classic.session_timeout_ms,
                "supported_protocols": [{"name": n, "metadata": m} for n, m in member.classic.protocols],
            },
        })
        out[(rec.CURRENT_MEMBER_ASSIGNMENT, member.member_id)] = rec.value(rec.CURRENT_MEMBER_ASSIGNMENT, {
            "member_epoch": member.member_epoch,
            "previous_member_epoch": member.previous_member_epoch,
            "state": rec.MEMBER_STATE_CODES[member.state.value],
            "assigned_partitions": rec.topic_partitions(member.assigned),
            "partitions_pending_revocation": rec.topic_partitions(member.pending_revocation),
        })
    for member_id, target in group.target.items():
        out[(rec.TARGET_ASSIGNMENT_MEMBER, member_id)] = rec.value(
            rec.TARGET_ASSIGNMENT_MEMBER, {"topic_partitions": rec.topic_partitions(target)})
    return out


# The records that turn what was written into what is wanted, in Kafka's order.
changes = rec.LAYOUT.changes


@dataclass
class LoadedRecords:
    """One group's consumer-group records as replay left them (latest value per key)."""

    values: dict[RecordId, bytes] = field(default_factory=dict)

    def apply(self, key: rec.ConsumerGroupRecordKey, value: bytes | None) -> None:
        group_records_layout.apply(self.values, key, value)


def restore(group_id: str, loaded: LoadedRecords, now: int, session_timeout_ms: int) -> ConsumerGroup | None:
    """The group its records describe; None when they hold no group (all tombstoned)."""
    parsed = {}
    for rid, data in loaded.values.items():
        try:
            parsed[rid] = rec.parse_value(rid[0], data)
        except UnknownRecord as exc:  # a value a newer Kafka wrote, or a damaged one
            log.warning("group %s: skipping record type %d of member %s: %s", group_id, rid[0], rid[1], exc)
    if not parsed:
        return None
    group = ConsumerGroup(group_id, now)
    if (rec.GROUP_METADATA, None) in parsed:
        group.group_epoch = parsed[(rec.GROUP_METADATA, None)].epoch
    if (rec.TARGET_ASSIGNMENT_METADATA, None) in parsed:
        group.assignment_epoch = parsed[(rec.TARGET_ASSIGNMENT_METADATA, None)].assignment_epoch
    if (rec.PARTITION_METADATA, None) in parsed:
        group.subscription_metadata = {
            t.topic_name: (t.topic_id, t.num_partitions) for t in parsed[(rec.PARTITION_METADATA, None)].topics
        }
    for (record_type, member_id), value in parsed.items():
        if record_type == rec.TARGET_ASSIGNMENT_MEMBER:
            group.target[member_id] = rec.assignment_from(value.topic_partitions)
    for (record_type, member_id), value in parsed.items():
        if record_type != rec.MEMBER_METADATA:
            continue
        classic = None
        if value.get("classic_member_metadata") is not None:
            metadata = value.classic_member_metadata
            classic = ClassicMetadata(metadata.session_timeout_ms,
                                      tuple((p.name, bytes(p.metadata)) for p in metadata.supported_protocols))
        member = ConsumerMember(
            member_id,
            classic=classic,
            instance_id=value.instance_id,
            rack_id=value.rack_id,
            client_id=value.client_id,
            client_host=value.client_host,
            rebalance_timeout_ms=value.rebalance_timeout_ms,
            subscribed_topic_names=tuple(value.subscribed_topic_names),
            subscribed_topic_regex=value.subscribed_topic_regex,
            server_assignor=value.server_assignor,
            # As Kafka's onLoaded: every member gets a full session from now on.
            session_deadline=now + (classic.session_timeout_ms if classic else session_timeout_ms),
            # Kafka keeps its last (authorized) regex resolution; until the member's next
            # heartbeat brings its principal's filter, its regex keeps to the topics it had.
            regex_filter=frozenset(group.subscription_metadata).__contains__,
        )
        current = parsed.get((rec.CURRENT_MEMBER_ASSIGNMENT, member_id))
        if current is not None:
            member.member_epoch = current.member_epoch
            member.previous_member_epoch = current.previous_member_epoch
            member.state = MemberState(rec.MEMBER_STATE_NAMES.get(current.state, MemberState.STABLE.value))
            member.assigned = rec.assignment_from(current.assigned_partitions)
            member.pending_revocation = rec.assignment_from(current.partitions_pending_revocation)
            if member.state is MemberState.UNREVOKED_PARTITIONS:
                member.rebalance_deadline = now + max(member.rebalance_timeout_ms, 0)
        group.put(member)
    # Kafka writes each regex's resolution as a record (type 16); trafka keeps them in memory, so
    # a loaded group counts every member's regex as resolved and matches it from now on.
    group.resolved_regexes = group.regexes_in_use()
    return group
