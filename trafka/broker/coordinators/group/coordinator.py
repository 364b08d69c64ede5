"""The group coordinator: every group of this broker, on the coordinator runtime.

Organised as Kafka's new group coordinator is. The state lives in shards, one per partition of
`__consumer_offsets` (`shard.GroupShard`, loaded and unloaded by the runtime in
trafka/broker/coordinators/runtime); `groups` and `consumer_groups` are every loaded shard's groups as one
mapping each. Three managers do the work, each its own object: classic groups
(`classic.ClassicGroupManager`: JoinGroup/SyncGroup/Heartbeat/LeaveGroup), KIP-848 consumer
groups (`consumer.ConsumerGroupManager`, model in `consumer_group.py`) and committed offsets
(`offsets.OffsetMetadataManager`). This class routes requests to them and owns every write.

Every write goes through `CoordinatorRuntime.write`: the records are appended first, and the
change is applied only once they are in the log. A failed append leaves the groups as they
were and answers Kafka's error. A ConsumerGroupHeartbeat runs on copies of the groups it
touches (`overlay.GroupOverlay`); their records are the difference from what was written
before (`consumer_store.changes`), and the copies replace the groups after the append.

Time comes from the injected clock. The `run` task calls `expire(now)` for every deadline that
has passed and sleeps until `next_deadline()`, so a test can instead move a manual clock and call
`expire` itself.
"""

from __future__ import annotations

import copy
import logging
import math

import trio

from trafka.broker.coordinators.group import formats, migration
from trafka.broker.coordinators.group.classic import ClassicGroupManager, JoinRequest, JoinResult, SyncResult
from trafka.broker.coordinators.group.consumer import ConsumerGroupManager, HeartbeatResult
from trafka.broker.coordinators.group.consumer_group import ConsumerGroup
from trafka.broker.coordinators.group.consumer_store import changes, group_records
from trafka.broker.coordinators.group.describe import describe
from trafka.broker.coordinators.group.formats import GroupKey, GroupMemberRecord, GroupRecord, OffsetKey
from trafka.broker.coordinators.group.group import Group, GroupState, Member
from trafka.broker.coordinators.group.hosted import HostedClassicMembers
from trafka.broker.coordinators.group.offsets import OffsetCommit, OffsetMetadataManager
from trafka.broker.coordinators.group.offsets_topic import OFFSETS_TOPIC, TOPIC_CONFIGS
from trafka.broker.coordinators.group.overlay import GroupOverlay
from trafka.broker.coordinators.group.shard import GroupMap, GroupShard, load_groups, load_state
from trafka.broker.coordinators.runtime.internal_topic import InternalTopic
from trafka.broker.coordinators.share import group_records as share_records
from trafka.broker.coordinators.share.group import ShareGroup, ShareGroupManager, ShareHeartbeat, ShareHeartbeatResult
from trafka.broker.coordinators.runtime.records import CoordinatorRecord, CoordinatorResult
from trafka.broker.coordinators.runtime.runtime import CoordinatorRuntime, CoordinatorWriteError
from trafka.storage.errors import StorageError
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.coordinator")

__all__ = ["GroupCoordinator", "JoinRequest", "JoinResult", "OffsetCommit", "SyncResult", "load_groups", "load_state"]

EMPTY, STABLE, DEAD = GroupState.EMPTY, GroupState.STABLE, GroupState.DEAD

# The timer task never spins faster than this, whatever the deadlines say.
MIN_TIMER_MS = 5
# A timer's change that could not be written (a member's expiry) is tried again this much later.
RETRY_MS = 1000


class GroupCoordinator:
    def __init__(self, logs, config, clock, group_configs):
        self.logs = logs
        self.config = config
        self.clock = clock
        self.group_configs = group_configs
        self.offsets_topic = InternalTopic(logs, OFFSETS_TOPIC, config["offsets.topic.num.partitions"], TOPIC_CONFIGS, clock)
        self.runtime: CoordinatorRuntime[GroupShard] = CoordinatorRuntime(self.offsets_topic, lambda p: GroupShard(p, self))
        self.groups = GroupMap(self.runtime, "groups")  # classic groups (and offsets-only groups)
        self.consumer_groups = GroupMap(self.runtime, "consumer_groups")  # KIP-848 groups; an id is in one map only
        self.share_groups = GroupMap(self.runtime, "share_groups")  # KIP-932 share groups
        # Told of a share member whose heartbeats stopped (the share coordinator releases its records).
        self.on_share_member_expired = lambda group_id, member_id: None
        self.on_share_group_deleted = lambda group_id: ErrorCode.NONE
        self.classic = ClassicGroupManager(self)
        self.share = ShareGroupManager(self)
        self.consumer = ConsumerGroupManager(self)
        self.offsets = OffsetMetadataManager(self)
        self._wakeup = trio.Event()
        self._failing: dict[str, int] = {}  # group id -> when its timer's change that failed is tried again


    def log_loaded(self) -> None:
        log.info("loaded %d classic and %d consumer groups from %s", len(self.groups), len(self.consumer_groups),
                 OFFSETS_TOPIC)

    async def run(self) -> None:
        """The broker's timer task: expire what is due, sleep until the next deadline or until
        a request changes the deadlines."""
        while True:
            self._wakeup = trio.Event()
            self.expire(self.now())
            due = self.next_deadline()
            timeout = math.inf if due is None else max(due - self.now(), MIN_TIMER_MS) / 1000
            with trio.move_on_after(timeout):
                await self._wakeup.wait()

    def reschedule(self) -> None:
        """Re-check every deadline now (a request changed them, or the broker clock moved)."""
        self._wakeup.set()

    def now(self) -> int:
        """Broker time for deadlines (sessions, rebalances, offsets' expiry): the clock's timer."""
        return self.clock.timer_ms()

    def expire(self, now: int) -> None:
        """Act on every group deadline that has passed, classic and consumer groups alike. A
        group whose change could not be written is left alone until RETRY_MS later."""
        self.classic.expire(now)
        held = {group_id for group_id, retry in self._failing.items() if retry > now}
        self._on_copies(lambda manager: manager.expire_consumer_groups(now, held), None, now)
        self._expire_share_members(now, held)

    def next_deadline(self) -> int | None:
        due = [d for d in (self.classic.next_deadline(), self.consumer.next_consumer_deadline(self._failing),
                           self.share.next_deadline(self._failing)) if d is not None]
        return min(due, default=None)

    def _timer_write_failed(self, group_id: str, now: int, error: CoordinatorWriteError) -> None:
        """A timer's change of the group was not written: tried again RETRY_MS later, with one
        error line until it is."""
        if group_id not in self._failing:
            log.error("group %s: a timer's change not written (%s); tried again every %d ms until it is",
                      group_id, error.cause, RETRY_MS)
        self._failing[group_id] = now + RETRY_MS

    def _timer_write_done(self, group_id: str) -> None:
        if self._failing.pop(group_id, None) is not None:
            log.info("group %s: the timer's change is written now", group_id)

    # --- requests, routed to the managers ----------------------------------------------------

    # Classic-protocol requests to a consumer group go to the members it hosts (online
    # migration, hosted.py), on copies of the group as a ConsumerGroupHeartbeat does.

    def _hosts(self, group_id: str, *, joining: bool = False) -> bool:
        group = self.consumer_groups.get(group_id)
        return group is not None and (bool(group.members) or not joining)

    def _hosted(self, work, failed):
        result = self._on_copies(lambda manager: work(HostedClassicMembers(manager)), failed)
        self.reschedule()
        return result

    async def join_group(self, request: JoinRequest) -> JoinResult:
        if self._hosts(request.group_id, joining=True):
            return self._hosted(lambda hosted: hosted.join(request),
                                lambda error, result: JoinResult(error, request.member_id))
        return await self.classic.join_group(request)

    async def sync_group(self, group_id, generation, member_id, group_instance_id, protocol_type, protocol_name,
                         assignments) -> SyncResult:
        if self._hosts(group_id):
            return self._hosted(
                lambda hosted: hosted.sync(group_id, generation, member_id, group_instance_id, protocol_type, protocol_name),
                lambda error, result: SyncResult(error))
        return await self.classic.sync_group(group_id, generation, member_id, group_instance_id, protocol_type,
                                             protocol_name, assignments)

    def heartbeat(self, group_id, generation, member_id, group_instance_id) -> ErrorCode:
        if self._hosts(group_id):
            return self._hosted(lambda hosted: hosted.heartbeat(group_id, generation, member_id, group_instance_id),
                                lambda error, result: error)
        return self.classic.heartbeat(group_id, generation, member_id, group_instance_id)

    def leave_group(self, group_id, leaving):
        if self._hosts(group_id):
            return self._hosted(lambda hosted: hosted.leave(group_id, leaving),
                                lambda error, result: (error, [error] * len(leaving)))
        return self.classic.leave_group(group_id, leaving)

    def consumer_group_heartbeat(self, request) -> HeartbeatResult:
        """ConsumerGroupHeartbeat, on copies of the groups it touches; the copies are written
        and installed only when their records are in the log."""
        def failed(error: ErrorCode, result: HeartbeatResult) -> HeartbeatResult:
            return HeartbeatResult(error, "The group's new state could not be written.",
                                   member_id=result.member_id, member_epoch=request.member_epoch)
        result = self._on_copies(lambda manager: manager.consumer_group_heartbeat(request), failed)
        self.reschedule()
        return result

    def group_config(self, group_id: str, name: str):
        """The group's setting in force (its group config, else the broker's; group_configs.py)."""
        return self.group_configs.value(group_id, name)

    def share_group_heartbeat(self, request: ShareHeartbeat) -> ShareHeartbeatResult:
        """ShareGroupHeartbeat on a copy of the share group; the copy's records are written
        before it replaces the group (a failed write answers the error, nothing changed)."""
        result: list[ShareHeartbeatResult] = []

        def heartbeat(group):
            after, answer = self.share.heartbeat(request, group)
            result.append(answer)
            return after if answer.error == ErrorCode.NONE else group
        error = self._change_share_group(request.group_id, heartbeat)
        self.reschedule()
        if error:
            return ShareHeartbeatResult(error, "The group's new state could not be written.",
                                        member_id=request.member_id, member_epoch=request.member_epoch)
        return result[0]

    def _change_share_group(self, group_id: str, change, *, raising: bool = False) -> ErrorCode:
        """The one way a share group changes: `change(copy)` (None when there is no group)
        returns the group as it should be; the records that differ from those last written
        (share/group_records.py) are appended, then the group is installed. A failed write
        changes nothing and is the answer (with `raising`, the CoordinatorWriteError)."""
        shard = self.shard_for(group_id)
        current = shard.share_groups.get(group_id)
        after = change(copy.deepcopy(current))
        written = shard.share_records.get(group_id, {})
        wanted = share_records.group_records(after) if after is not None else {}
        entries = [CoordinatorRecord(k, v) for k, v in share_records.changes(group_id, written, wanted)]

        def install() -> None:
            if after is None:
                shard.share_groups.pop(group_id, None)
                shard.share_records.pop(group_id, None)
            else:
                shard.share_groups[group_id] = after
                shard.share_records[group_id] = wanted
        if not entries:  # only sessions moved: nothing to write
            install()
            return ErrorCode.NONE
        try:
            self.write(group_id, entries, apply=install)
        except CoordinatorWriteError as exc:
            if raising:
                raise
            log.error("share group %s: change not written: %s", group_id, exc.cause)
            return exc.error
        return ErrorCode.NONE

    def _expire_share_members(self, now: int, held=frozenset()) -> None:
        """Share members whose heartbeats stopped are removed (written first), then the records
        they hold are released; a failed write is tried again RETRY_MS later (groups `held`
        wait for it)."""
        for group_id, member_ids in self.share.expired(now).items():
            if group_id in held:
                continue
            def remove(group, gone=member_ids):
                for member_id in gone:
                    self.share.remove(group, member_id, "session timed out", now)
                return group
            try:
                self._change_share_group(group_id, remove, raising=True)
            except CoordinatorWriteError as exc:
                self._timer_write_failed(group_id, now, exc)
                continue
            self._timer_write_done(group_id)
            for member_id in member_ids:
                self.on_share_member_expired(group_id, member_id)

    def consumer_assignors(self) -> list[str]:
        return self.consumer.consumer_assignors()

    def preferred_assignor(self, group: ConsumerGroup) -> str:
        return self.consumer.preferred_assignor(group)

    def commit_offsets(self, *args, **kwargs) -> list[ErrorCode]:
        return self.offsets.commit_offsets(*args, **kwargs)

    def txn_commit_offsets(self, *args) -> list[ErrorCode]:
        return self.offsets.txn_commit_offsets(*args)

    def complete_txn(self, *args) -> None:
        self.offsets.complete_txn(*args)

    def has_pending_txn_offset(self, group_id: str, topic: str, partition: int) -> bool:
        return self.offsets.has_pending_txn_offset(group_id, topic, partition)

    def validate_offset_fetch(self, *args) -> ErrorCode:
        return self.offsets.validate_offset_fetch(*args)

    def offsets_group(self, group_id: str):
        return self.offsets.offsets_group(group_id)

    def fetch_offsets(self, *args, **kwargs):
        return self.offsets.fetch_offsets(*args, **kwargs)

    def delete_offsets(self, *args):
        return self.offsets.delete_offsets(*args)

    def expire_offsets(self, now: int) -> None:
        self.offsets.expire_offsets(now)

    def on_topic_deleted(self, topic: str) -> None:
        self.offsets.on_topic_deleted(topic)

    def partition_exists(self, topic: str, partition: int) -> bool:
        return self.offsets.partition_exists(topic, partition)

    # --- writes ------------------------------------------------------------------------------

    def write(self, group_id: str, records: list[CoordinatorRecord], response=None, apply=None, **txn):
        """Append `records` to the group's partition, then `apply()` (default: replay them into
        the shard), then return `response`. Raises CoordinatorWriteError, nothing applied."""
        installed = None if apply is None else lambda base_offset: apply()
        return self.runtime.write(self.offsets_topic.partition_for(group_id),
                                  lambda shard: CoordinatorResult(records, response, installed), **txn)

    def shard_for(self, group_id: str) -> GroupShard:
        return self.runtime.shard_for(group_id)

    def _on_copies(self, work, failed, now: int | None = None):
        """Run `work(manager)` with a consumer-group manager over copies of the groups (an
        overlay); write each touched group's records and install its copy once written. A
        failed write leaves that group as it was: `failed(error, result)` is answered, or
        (timers, failed None, at `now`) the change is tried again RETRY_MS later."""
        overlay = GroupOverlay(self)
        result = work(ConsumerGroupManager(self, overlay))
        for group_id in overlay.touched():
            shard = self.shard_for(group_id)
            written = shard.consumer_records.get(group_id, {})
            group = overlay.consumer_groups.get(group_id)
            wanted = group_records(group) if group is not None else {}
            entries = [CoordinatorRecord(k, v) for k, v in changes(group_id, written, wanted)]
            if overlay.classic_deleted(group_id):
                entries.insert(0, CoordinatorRecord(formats.group_key(GroupKey(group_id)), None))
            try:
                self.write(group_id, entries, apply=lambda g=group_id, w=wanted: self._install(overlay, g, w))
            except CoordinatorWriteError as exc:
                if failed is None:
                    self._timer_write_failed(group_id, self.now() if now is None else now, exc)
                    continue
                return failed(exc.error, result)
            if failed is None:
                self._timer_write_done(group_id)
            self._maybe_downgrade(group_id)
        return result

    def _maybe_downgrade(self, group_id: str) -> None:
        """A consumer group left with classic members only becomes a classic group and
        rebalances (online downgrade, migration.py): its records are tombstoned and the classic
        group's written in one batch, then it is installed. A failed write keeps the consumer
        group, which goes on hosting its classic members."""
        group = self.consumer_groups.get(group_id)
        if group is None or not group.members or migration.downgrade_refusal(self.config, group) is not None:
            return
        now = self.now()
        classic = migration.downgrade(group, self.logs, now)
        shard = self.shard_for(group_id)
        entries = [CoordinatorRecord(k, v) for k, v in changes(group_id, shard.consumer_records.get(group_id, {}), {})]
        entries.append(self._group_metadata_record(classic, list(classic.members.values()), now))

        def apply() -> None:
            del self.consumer_groups[group_id]
            shard.consumer_records.pop(group_id, None)
            self.groups[group_id] = classic
            self.classic.prepare_rebalance(classic, now, "the group's last member of the consumer protocol left "
                                                         "(online downgrade)")
        try:
            self.write(group_id, entries, apply=apply)
        except CoordinatorWriteError as exc:
            log.error("group %s: cannot downgrade to a classic group: %s", group_id, exc.cause)

    def _install(self, overlay: GroupOverlay, group_id: str, wanted: dict) -> None:
        shard = self.shard_for(group_id)
        before, after = self.consumer_groups.get(group_id), overlay.consumer_groups.changed.get(group_id)
        if isinstance(after, ConsumerGroup):
            _note_transition(before, after, self.now())
        upgraded = self.groups.get(group_id) if overlay.classic_deleted(group_id) else None
        overlay.install(group_id)
        if upgraded is not None:  # its parked JoinGroup / SyncGroup learn that they must rejoin
            self.classic.settle_all(upgraded, ErrorCode.REBALANCE_IN_PROGRESS)
        if wanted:
            shard.consumer_records[group_id] = wanted
        else:
            shard.consumer_records.pop(group_id, None)

    def convert_to_classic(self, group_id: str, now: int) -> ErrorCode:
        """An empty consumer group becomes a classic group at a JoinGroup, keeping its committed
        offsets: its records are tombstoned first."""
        consumer_group = self.consumer_groups[group_id]
        shard = self.shard_for(group_id)
        tombstones = [CoordinatorRecord(k, v) for k, v in changes(group_id, shard.consumer_records.get(group_id, {}), {})]

        def apply() -> None:
            del self.consumer_groups[group_id]
            shard.consumer_records.pop(group_id, None)
            self.groups[group_id] = Group(group_id, now, offsets=consumer_group.offsets)
            log.info("group %s: empty consumer group becomes a classic group", group_id)
        try:
            self.write(group_id, tombstones, apply=apply)
        except CoordinatorWriteError as exc:
            return exc.error
        return ErrorCode.NONE

    def store_group(self, group: Group, now: int, *, members: list[Member] | None = None, apply=None) -> ErrorCode:
        """Write the group's metadata record, with `members` (default: the group's own) as they
        will be once `apply()` has run after the write; NONE, or the error the members are
        answered with (SyncGroup and a static member's rejoin fail with it, as in Kafka)."""
        members = list(group.members.values()) if members is None else members
        try:
            self.write(group.group_id, [self._group_metadata_record(group, members, now)], apply=apply or (lambda: None))
        except CoordinatorWriteError as exc:
            log.error("group %s: cannot write group metadata: %s", group.group_id, exc.cause)
            return exc.error
        return ErrorCode.NONE

    @staticmethod
    def _group_metadata_record(group: Group, members: list[Member], now: int) -> CoordinatorRecord:
        record = GroupRecord(
            protocol_type=group.protocol_type or "",
            generation=group.generation,
            protocol=group.protocol_name,
            leader=group.leader_id if members else None,
            current_state_timestamp=now,
            members=tuple(
                GroupMemberRecord(
                    m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                    m.session_timeout_ms, m.metadata(group.protocol_name or "") or b"", m.assignment,
                )
                for m in members
            ),
        )
        return CoordinatorRecord(formats.group_key(GroupKey(group.group_id)), formats.group_value(record))

    # --- groups as a whole --------------------------------------------------------------------

    def group(self, group_id: str) -> Group | ConsumerGroup | ShareGroup | None:
        """The group of that id, whichever kind (an id is one or the other)."""
        for kind in (self.consumer_groups, self.share_groups, self.groups):
            found = kind.get(group_id)
            if found is not None:
                return found
        return None

    def all_groups(self) -> dict[str, Group | ConsumerGroup | ShareGroup]:
        """Every group of every loaded shard by id, classic, consumer and share groups alike."""
        return {**self.groups, **self.consumer_groups, **self.share_groups}

    def describe_group(self, group_id: str, log_end) -> dict:
        """The one description of a group (describe.py); LookupError for an unknown id."""
        found = self.group(group_id)
        if found is None:
            raise LookupError(f"unknown group {group_id!r}")
        return describe(found, log_end, self.preferred_assignor, self.topic_name)

    def topic_name(self, topic_id) -> str | None:
        try:
            return self.logs.topic_by_id(topic_id).name
        except StorageError:
            return None

    def delete_groups(self, group_ids: list[str]) -> list[ErrorCode]:
        return [self.delete_group(group_id) for group_id in group_ids]

    def delete_group(self, group_id: str) -> ErrorCode:
        """DeleteGroups of one group: its offsets and metadata are tombstoned, then it goes."""
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID
        shard = self.shard_for(group_id)
        share_group = self.share_groups.get(group_id)
        if share_group is not None:
            if share_group.members:
                return ErrorCode.NON_EMPTY_GROUP
            error = self.on_share_group_deleted(group_id)  # its share-partitions' state, tombstoned first
            if not error:
                error = self._change_share_group(group_id, lambda group: None)
            if not error:
                log.info("share group %s: deleted", group_id)
            return error
        consumer_group = self.consumer_groups.get(group_id)
        if consumer_group is not None:
            if consumer_group.members:
                return ErrorCode.NON_EMPTY_GROUP
            group, more = consumer_group, changes(group_id, shard.consumer_records.get(group_id, {}), {})
        else:
            group = self.groups.get(group_id)
            if group is None or group.is_(DEAD):
                return ErrorCode.GROUP_ID_NOT_FOUND
            if not group.is_(EMPTY):
                return ErrorCode.NON_EMPTY_GROUP
            more = [(formats.group_key(GroupKey(group_id)), None)]
        tombstones = [CoordinatorRecord(formats.offset_key(OffsetKey(group_id, t, p)), None) for t, p in group.offsets]
        tombstones += [CoordinatorRecord(k, v) for k, v in more]

        def apply() -> None:
            if consumer_group is not None:
                consumer_group.dead = True
                del self.consumer_groups[group_id]
                shard.consumer_records.pop(group_id, None)
            else:
                group.transition(DEAD, self.now())
                del self.groups[group_id]
            log.info("group %s: deleted with %d committed offsets", group_id, len(group.offsets))
        try:
            self.write(group_id, tombstones, apply=apply)
        except CoordinatorWriteError as exc:
            log.error("group %s: cannot delete: %s", group_id, exc.cause)
            return exc.error
        return ErrorCode.NONE


def _note_transition(before: ConsumerGroup | None, after: ConsumerGroup, now: int) -> None:
    """Record a consumer group's state change or new group epoch in its history."""
    previous = before.state.value if before is not None else "Empty"
    epoch = before.group_epoch if before is not None else 0
    if after.state.value == previous and after.group_epoch == epoch:
        return
    after.transitions.append({
        "time_ms": now, "previous_state": previous, "state": after.state.value, "generation": after.group_epoch,
        "protocol": None, "leader": None, "members": sorted(m.client_id for m in after.members.values()),
        "reason": None if after.group_epoch == epoch else f"group epoch {after.group_epoch}",
        "rebalance": after.group_epoch != epoch,  # a new group epoch is a rebalance (KIP-848)
    })
