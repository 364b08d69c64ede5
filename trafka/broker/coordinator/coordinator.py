"""The group coordinator: every group of this one broker, over one state topic.

Organised as Kafka's new group coordinator is: classic groups (`classic.ClassicGroupManager`),
KIP-848 consumer groups (`consumer.ConsumerGroupManager`, model in `consumer_group.py`, their
records written by `consumer_store.ConsumerGroupStore`) and committed offsets
(`offsets.OffsetMetadataManager`) are separate modules; this class holds
what they share (the groups, the `__consumer_offsets` writer, the clock), writes group metadata
records, deletes groups, and loads everything back at start.

Time comes from the injected clock. The `run` task calls `expire(now)` for every deadline that
has passed and sleeps until `next_deadline()`, so a test can instead move a manual clock and call
`expire` itself.
"""

from __future__ import annotations

import logging
import math
from typing import Iterable

import trio

from trafka.broker.coordinator import consumer_store, formats
from trafka.broker.coordinator.classic import ClassicGroupManager, JoinRequest, JoinResult, SyncResult
from trafka.broker.coordinator.consumer import ConsumerGroupManager
from trafka.broker.coordinator.consumer_group import ConsumerGroup
from trafka.broker.coordinator.consumer_records import ConsumerGroupRecordKey
from trafka.broker.coordinator.consumer_store import ConsumerGroupStore, LoadedRecords
from trafka.broker.coordinator.formats import CommittedOffset, GroupKey, GroupMemberRecord, GroupRecord, OffsetKey
from trafka.broker.coordinator.group import Group, GroupState, Member
from trafka.broker.coordinator.offsets import OffsetCommit, OffsetMetadataManager
from trafka.broker.coordinator.offsets_topic import OFFSETS_TOPIC, OffsetsTopic
from trafka.broker.coordinator.txn_offsets import PendingTxnOffsets
from trafka.broker.errors import coordinator_write_error
from trafka.storage import errors as storage_errors
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.coordinator")

__all__ = ["GroupCoordinator", "JoinRequest", "JoinResult", "OffsetCommit", "SyncResult", "load_groups", "load_state"]

EMPTY, STABLE, DEAD = GroupState.EMPTY, GroupState.STABLE, GroupState.DEAD

# The timer task never spins faster than this, whatever the deadlines say.
MIN_TIMER_MS = 5


class GroupCoordinator(ConsumerGroupStore, ClassicGroupManager, ConsumerGroupManager, OffsetMetadataManager):
    def __init__(self, logs, config, clock):
        self.logs = logs
        self.config = config
        self.clock = clock
        self.groups: dict[str, Group] = {}  # classic groups (and offsets-only groups)
        self.consumer_groups: dict[str, ConsumerGroup] = {}  # KIP-848 groups; an id is in one map only
        self.offsets_topic = OffsetsTopic(logs, config["offsets.topic.num.partitions"], clock)
        self.pending_txn_offsets = PendingTxnOffsets()
        self._consumer_records = {}
        self._wakeup = trio.Event()
        self._load()

    async def run(self) -> None:
        """The broker's timer task: expire what is due, sleep until the next deadline or until
        a request changes the deadlines."""
        while True:
            self._wakeup = trio.Event()
            self.expire(self._now())
            due = self.next_deadline()
            timeout = math.inf if due is None else max(due - self._now(), MIN_TIMER_MS) / 1000
            with trio.move_on_after(timeout):
                await self._wakeup.wait()

    def _reschedule(self) -> None:
        self._wakeup.set()

    def reschedule(self) -> None:
        """Re-check every deadline now (the broker clock moved)."""
        self._wakeup.set()

    def _now(self) -> int:
        return self.clock.time_ms()

    def expire(self, now: int) -> None:
        """Act on every group deadline that has passed, classic and consumer groups alike."""
        ClassicGroupManager.expire(self, now)
        self.expire_consumer_groups(now)

    def next_deadline(self) -> int | None:
        due = [d for d in (ClassicGroupManager.next_deadline(self), self.next_consumer_deadline()) if d is not None]
        return min(due, default=None)

    # --- groups as a whole ----------------------------------------------------------------

    def delete_groups(self, group_ids: list[str]) -> list[ErrorCode]:
        return [self._delete_group(group_id) for group_id in group_ids]

    def _delete_group(self, group_id: str) -> ErrorCode:
        group = self.groups.get(group_id)
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID
        if group_id in self.consumer_groups:
            return self._delete_consumer_group(group_id)
        if group is None or group.is_(DEAD):
            return ErrorCode.GROUP_ID_NOT_FOUND
        if not group.is_(EMPTY):
            return ErrorCode.NON_EMPTY_GROUP
        error = self._write_deletion(group_id, group.offsets, [(formats.group_key(GroupKey(group_id)), None)])
        if error is not None:
            return error
        group.transition(DEAD, self._now())
        del self.groups[group_id]
        log.info("group %s: deleted with %d committed offsets", group_id, len(group.offsets))
        return ErrorCode.NONE

    def _write_deletion(self, group_id: str, offsets, more_tombstones: list) -> ErrorCode | None:
        """Tombstone the group's committed `offsets` and `more_tombstones` in __consumer_offsets;
        the error for the client when the write fails, else None."""
        tombstones = [(formats.offset_key(OffsetKey(group_id, t, p)), None) for t, p in offsets]
        try:
            self.offsets_topic.append(group_id, tombstones + list(more_tombstones))
        except storage_errors.StorageError as exc:
            log.error("group %s: cannot delete: %s", group_id, exc)
            return coordinator_write_error(exc)
        return None

    def _delete_consumer_group(self, group_id: str) -> ErrorCode:
        group = self.consumer_groups[group_id]
        if group.members:
            return ErrorCode.NON_EMPTY_GROUP
        error = self._write_deletion(group_id, group.offsets, self.consumer_group_tombstones(group_id))
        if error is not None:
            return error
        group.dead = True
        del self.consumer_groups[group_id]
        self.forget_consumer_group(group_id)
        log.info("consumer group %s: deleted with %d committed offsets", group_id, len(group.offsets))
        return ErrorCode.NONE

    def _store_group(self, group: Group, now: int) -> ErrorCode:
        """Write the group's metadata record; NONE, or the error the members are answered with
        (SyncGroup and a static member's rejoin fail with it, as in Kafka)."""
        record = GroupRecord(
            protocol_type=group.protocol_type or "",
            generation=group.generation,
            protocol=group.protocol_name,
            leader=group.leader_id if group.members else None,
            current_state_timestamp=now,
            members=tuple(
                GroupMemberRecord(
                    m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                    m.session_timeout_ms, m.metadata(group.protocol_name or "") or b"", m.assignment,
                )
                for m in group.members.values()
            ),
        )
        try:
            self.offsets_topic.append(group.group_id, [(formats.group_key(GroupKey(group.group_id)), formats.group_value(record))])
        except (storage_errors.StorageError, OSError) as exc:
            log.error("group %s: cannot write group metadata: %s", group.group_id, exc)
            return coordinator_write_error(exc)
        return ErrorCode.NONE

    # --- startup --------------------------------------------------------------------------

    def _load(self) -> None:
        self.groups, self.consumer_groups, self._consumer_records = load_state(
            self.offsets_topic.replay(), self._now(), self.config["group.consumer.session.timeout.ms"])
        self.pending_txn_offsets.load(self.offsets_topic.pending)
        log.info("loaded %d classic and %d consumer groups from %s", len(self.groups), len(self.consumer_groups),
                 OFFSETS_TOPIC)


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
        if isinstance(key, ConsumerGroupRecordKey):
            continue  # consumer groups: load_state
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
