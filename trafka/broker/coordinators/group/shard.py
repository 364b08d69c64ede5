"""One partition of `__consumer_offsets` and the groups that live in it: the group
coordinator's shard on the coordinator runtime (trafka/broker/coordinators/runtime).

A group lives in partition abs(hashCode(group id)) % partitions, so each shard holds its own
classic groups, KIP-848 consumer groups (with the record values last written for each),
committed offsets and transactional offsets waiting for their marker. `GroupMap` puts the
loaded shards back together as one mapping per kind, so the managers ask `groups[group_id]`
and never which shard holds it; unloading a shard (`CoordinatorRuntime.unload`) takes its
groups away.

Replay: at load, records are gathered and `loaded()` builds the groups from them (the latest
record per key wins, tombstones delete), as Kafka's loader does. After load, `replay` applies
committed-offset records (and tombstones) one by one: an OffsetCommit or OffsetDelete is
applied from the very records that were written. Group metadata, consumer-group and share-group records
carry members that are also waiting in requests, so their operations apply a prepared change
once the records are written (`CoordinatorResult.apply`) and `replay` only keeps the record
values (`consumer_records`, `share_records`) that later changes are compared against.
"""

from __future__ import annotations

import logging
from typing import Iterable

from trafka.broker.coordinators.group import consumer_store, formats
from trafka.broker.coordinators.group.consumer_records import ConsumerGroupRecordKey
from trafka.broker.coordinators.group.consumer_store import LoadedRecords
from trafka.broker.coordinators.group.formats import CommittedOffset, GroupKey, GroupRecord, OffsetKey
from trafka.broker.coordinators.group.group import Group, GroupState, Member
from trafka.broker.coordinators.group.txn_offsets import PendingTxnOffsets
from trafka.broker.coordinators.runtime.records import UnknownRecord
from trafka.broker.coordinators.runtime.runtime import ShardMap
from trafka.broker.coordinators.share import group_records as share_records
from trafka.broker.coordinators.share.group_records import ShareGroupRecordKey
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.coordinator")

EMPTY, STABLE = GroupState.EMPTY, GroupState.STABLE


class GroupShard:
    def __init__(self, partition: int, coordinator):
        self.partition = partition
        self.coordinator = coordinator
        self.groups: dict[str, Group] = {}  # classic groups (and offsets-only groups)
        self.consumer_groups: dict = {}  # KIP-848 groups; an id is in one map only
        self.share_groups: dict = {}  # KIP-932 share groups
        self.consumer_records: dict[str, dict] = {}  # consumer group -> record values last written
        self.share_records: dict[str, dict] = {}  # share group -> record values last written
        self.pending_txn_offsets = PendingTxnOffsets()
        self._loading: list | None = []

    # --- replay ----------------------------------------------------------------------------

    def replay(self, key: bytes, value: bytes | None, offset: int = -1) -> None:
        parsed = formats.parse_key(key)
        if self._loading is not None:
            self._loading.append((parsed, value))
            return
        if isinstance(parsed, OffsetKey):
            group = self.consumer_groups.get(parsed.group) or self.groups.get(parsed.group)
            tp = (parsed.topic, parsed.partition)
            if value is None:
                if group is not None:
                    group.offsets.pop(tp, None)
                return
            offset = formats.parse_offset_value(value)
            if group is None:
                group = self.groups[parsed.group] = Group(parsed.group, self.coordinator.now())
            group.offsets[tp] = offset
        elif isinstance(parsed, ConsumerGroupRecordKey):
            values = self.consumer_records.setdefault(parsed.group, {})
            rid = (parsed.record_type, parsed.member_id)
            if value is None:
                values.pop(rid, None)
                if not values:
                    del self.consumer_records[parsed.group]
            else:
                values[rid] = value
        elif isinstance(parsed, ShareGroupRecordKey):
            share_records.apply(self.share_records.setdefault(parsed.group, {}), parsed, value)
            if not self.share_records[parsed.group]:
                del self.share_records[parsed.group]

    def loaded(self) -> None:
        entries, self._loading = self._loading, None
        now = self.coordinator.now()
        self.groups, self.consumer_groups, self.consumer_records = load_state(
            [(k, v) for k, v in entries if not isinstance(k, ShareGroupRecordKey)], now,
            self.coordinator.config["group.consumer.session.timeout.ms"])
        for key, value in entries:
            if isinstance(key, ShareGroupRecordKey):
                share_records.apply(self.share_records.setdefault(key.group, {}), key, value)
        for group_id, values in list(self.share_records.items()):
            group = share_records.restore(group_id, values, now,
                                          self.coordinator.group_config(group_id, "share.session.timeout.ms"))
            if group is None:
                del self.share_records[group_id]
            else:
                self.share_groups[group_id] = group
        pending = self.coordinator.offsets_topic.pending(self.partition)
        for producer_id, records in pending.items():
            for record in records:
                try:
                    key = formats.parse_key(record.key)
                    if isinstance(key, OffsetKey) and record.value is not None:
                        offset = formats.parse_offset_value(record.value)
                        self.pending_txn_offsets.add(producer_id, key.group, {(key.topic, key.partition): offset})
                except UnknownRecord as exc:
                    log.warning("skipping a pending transactional offset: %s", exc)

    def unloaded(self) -> None:
        """The partition's leadership moved away: every JoinGroup and SyncGroup parked on one
        of its groups is answered NOT_COORDINATOR now (Kafka's onUnloaded), so the members look
        for the new coordinator instead of waiting out their rebalance timeout."""
        for group in self.groups.values():
            self.coordinator.classic.settle_all(group, ErrorCode.NOT_COORDINATOR)
        self.coordinator.reschedule()


class GroupMap(ShardMap):
    """One kind of group (`groups`, `consumer_groups`, `share_groups` or `consumer_records`) of every loaded
    shard, as one mapping routed by group id."""


def load_state(entries: Iterable, now: int, session_timeout_ms: int):
    """(classic groups, consumer groups, the consumer groups' record values) as the log's
    entries leave them. A group id with live consumer-group records is a consumer group and
    takes the committed offsets; any classic metadata left for it is ignored."""
    classic_entries = []
    consumer_entries: dict[str, LoadedRecords] = {}
    for key, value in entries:
        if isinstance(key, ConsumerGroupRecordKey):
            consumer_entries.setdefault(key.group, LoadedRecords()).apply(key, value)
        else:
            classic_entries.append((key, value))
    groups = load_groups(classic_entries, now)
    consumer_groups, written = {}, {}
    for group_id, loaded in consumer_entries.items():
        group = consumer_store.restore(group_id, loaded, now, session_timeout_ms)
        if group is None:
            continue
        classic = groups.pop(group_id, None)
        if classic is not None:
            if classic.members:
                log.warning("group %s: has both classic and consumer group records; keeping the consumer group", group_id)
            group.offsets = classic.offsets
        consumer_groups[group_id] = group
        written[group_id] = dict(loaded.values)
    return groups, consumer_groups, written


def load_groups(entries: Iterable[tuple[OffsetKey | GroupKey, bytes | None]], now: int) -> dict[str, Group]:
    """Groups as __consumer_offsets' (key, value) entries, in log order, leave them: the latest
    record per key wins, tombstones delete. The coordinator's startup, and `trafka groups`."""
    records: dict[str, GroupRecord | None] = {}
    offsets: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
    for key, value in entries:
        if isinstance(key, (ConsumerGroupRecordKey, ShareGroupRecordKey)):
            continue  # consumer groups: load_state; share groups: GroupShard.loaded
        try:
            if isinstance(key, OffsetKey):
                group_offsets = offsets.setdefault(key.group, {})
                if value is None:
                    group_offsets.pop((key.topic, key.partition), None)
                else:
                    group_offsets[(key.topic, key.partition)] = formats.parse_offset_value(value)
            else:
                records[key.group] = None if value is None else formats.parse_group_value(value)
        except (formats.UnknownRecord, ValueError) as exc:
            log.warning("skipping a %s record of group %s: %s", type(key).__name__, key.group, exc)
    groups = {}
    for group_id in {*records, *offsets}:
        record, group_offsets = records.get(group_id), offsets.get(group_id, {})
        if record is None and not group_offsets:
            continue
        # As in Kafka, a loaded group's state dates from its metadata record.
        since = record.current_state_timestamp if record is not None and record.current_state_timestamp >= 0 else now
        group = Group(group_id, since, offsets=group_offsets)
        if record is not None:
            _restore(group, record, now)
        groups[group_id] = group
    return groups


def _restore(group: Group, record: GroupRecord, now: int) -> None:
    """A group as its last metadata record left it: Stable with its members (who must keep
    heartbeating within their session timeouts), or Empty."""
    group.protocol_type = record.protocol_type or None
    group.generation = record.generation
    group.protocol_name = record.protocol
    group.leader_id = record.leader
    for m in record.members:
        group.add(Member(
            m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
            m.session_timeout_ms, record.protocol_type,
            [(record.protocol, m.subscription)] if record.protocol else [],
            assignment=m.assignment,
            heartbeat_deadline=now + m.session_timeout_ms,
        ))
    group.state = STABLE if group.members and group.protocol_name else EMPTY
    if group.state is EMPTY:
        group.members.clear()
        group.static_members.clear()
        group.leader_id = None
