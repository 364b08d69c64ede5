"""Share groups split as Kafka splits them (KIP-932): the records in flight on the
share-partition's leader, their durable state in the share coordinator; and the share
sessions of ShareFetch / ShareAcknowledge.

A share-partition is (share group, topic id, partition). Its durable state (start offset and
state batches with delivery counts) lives in the `__share_group_state` partition its key
"group:topicId:partition" hashes to, as Kafka's share coordinator keys it, each such partition
one `ShareStateShard` on the coordinator runtime of that partition's leader: that part only
persists (Kafka's ReadShareGroupState / WriteShareGroupState). The records in flight
(`partition.SharePartition`: acquired, by whom, their lock deadlines) are kept by the broker
leading the topic partition, in `ShareCoordinator.partitions` (Kafka's SharePartitionManager):
loaded from the durable state at first use there, dropped when that broker stops leading the
partition. So moving `__share_group_state` keeps every lock and delivery count; moving the
topic partition's leadership makes the new leader start from the durable state, where acquired
records are available with their delivery counts, as in Kafka. A share-partition is created at
the group's first fetch of the partition, starting at the log end offset
(`share.auto.offset.reset` latest, Kafka's default) or the log start (earliest).

Write, then apply: an acknowledgement, a lock expiry or a session's release is applied to a
copy of the share-partition; when the copy's durable state differs from the one last written,
it is written; only then does the copy replace the share-partition. A failed write leaves it as
it was and the acknowledgement is answered with the error. Every write goes through `_write`.
Acquisitions are not written on their own: the next write carries their delivery counts (an
acquired record is written AVAILABLE with its count, as Kafka's persister has it).

What is written, as Kafka's share coordinator writes it (formats.py): a share-partition's first
state, a reset, and every `share.coordinator.snapshot.update.records.per.snapshot`-th write
after a snapshot are a whole ShareSnapshot; the writes between are ShareUpdates of the state
batches that changed, which replay merges into the state so far. So `__share_group_state` is
`cleanup.policy=delete` (compaction would keep only the newest update of a key), and the
coordinator removes what no state needs: every `share.coordinator.state.topic.prune.interval.ms`
it deletes the records below the oldest latest snapshot of its share-partitions
(Kafka's lastRedundantOffset), and every `share.coordinator.cold.partition.snapshot.interval.ms`
it writes a fresh snapshot of each share-partition that has had none since the previous round,
so an idle one holds that point back for one round at most. trafka keeps the topic's
retention.ms at -1 (Kafka leaves the broker's default): only this pruning removes state records.
A state topic whose cleanup.policy includes compact (a data dir from before, or a user's
choice) gets whole snapshots only, and no pruning.

The acquisition lock is a timer on the broker clock (`run`, and `expire_due` from
advance_clock), as Kafka's AcquisitionLockTimerTask: when a lock runs out its records are
available again (or archived at the delivery limit) and the share-partition's state is
written, so delivery counts survive a restart. A write that fails is tried again after
RETRY_MS, with one log line per share-partition until it succeeds.

A share-partition is written first when it is created (its start offset), then at each
durable change.

Share sessions (KIP-932), as Kafka's ShareSessionCache keeps them: a member's ShareFetch with
epoch 0 opens a session on the partitions it names, each later request carries the next epoch
and may add partitions or forget them. The session ends with the final epoch (-1), after that
request's acknowledgements are applied, or when its connection closes; either way the records
the member still holds are released. Leaving the group does not touch the session: a client's
close() leaves, then acknowledges with the final epoch.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import uuid
from dataclasses import dataclass, field

import trio

from trafka.broker.coordinators.runtime.internal_topic import InternalTopic
from trafka.broker.coordinators.runtime.records import CoordinatorRecord, CoordinatorResult
from trafka.broker.coordinators.runtime.runtime import CoordinatorRuntime, CoordinatorWriteError
from trafka.broker.coordinators.share import formats
from trafka.broker.coordinators.share.formats import SharePartitionKey, ShareSnapshot, ShareUpdate
from trafka.broker.coordinators.share.partition import RecordState, SharePartition
from trafka.storage.errors import StorageError
from trafka.wire.text import printable
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.share")

SHARE_STATE_TOPIC = "__share_group_state"
TOPIC_CONFIGS = {"cleanup.policy": "delete", "retention.ms": "-1", "segment.bytes": str(100 * 1024 * 1024)}
FINAL_EPOCH = -1


class ShareStateShard:
    """The durable state of the share-partitions of one `__share_group_state` partition, as its
    records replay: each one's snapshot epoch and (start offset, state batches); how many
    ShareUpdates followed its latest ShareSnapshot, and that snapshot's offset in the log."""

    def __init__(self) -> None:
        self.written: dict[SharePartitionKey, tuple[int, tuple[int, list]]] = {}
        self.updates: dict[SharePartitionKey, int] = {}
        self.snapshot_offsets: dict[SharePartitionKey, int] = {}
        # The log end offset at the previous cold-snapshot round: a share-partition whose latest
        # snapshot is below it has had none since (ShareCoordinator.snapshot_cold).
        self.cold_mark = 0

    def replay(self, key: bytes, value: bytes | None, offset: int = -1) -> None:
        record_type, k = formats.parse_key(key)
        if value is None:
            self.dropped(k)
        elif record_type == formats.SHARE_SNAPSHOT:
            snapshot = formats.parse_value(value)
            self.snapshotted(k, snapshot.snapshot_epoch, snapshot.start_offset, snapshot.batches, offset)
        else:
            update = formats.parse_update(value)
            self.updated(k, update.snapshot_epoch, update.start_offset, update.batches)

    def snapshotted(self, k: SharePartitionKey, epoch: int, start: int, batches, offset: int) -> None:
        self.written[k] = (epoch, (start, formats.combine([], batches, start)))
        self.updates[k] = 0
        self.snapshot_offsets[k] = offset

    def updated(self, k: SharePartitionKey, epoch: int, start: int, batches) -> None:
        """Laid over the state so far; with none (its snapshot pruned away, or never read), the
        update is the state, as Kafka's shard takes it."""
        found = self.written.get(k)
        old = found[1][1] if found is not None else []
        self.written[k] = (found[0] if found is not None else epoch, (start, formats.combine(old, batches, start)))
        self.updates[k] = self.updates.get(k, 0) + 1
        self.snapshot_offsets.setdefault(k, -1)  # no snapshot of it read: nothing below may go

    def dropped(self, k: SharePartitionKey) -> None:
        self.written.pop(k, None)
        self.updates.pop(k, None)
        self.snapshot_offsets.pop(k, None)

    def redundant_below(self) -> int | None:
        """Records below this offset are needed by no share-partition's state (Kafka's
        lastRedundantOffset): its oldest latest snapshot; None with no share-partition."""
        return min(self.snapshot_offsets.values(), default=None)


@dataclass
class ShareSession:
    epoch: int  # the epoch the next request must carry
    connection: str  # the connection that opened it: its close ends the session
    partitions: set[tuple[uuid.UUID, int]] = field(default_factory=set)


class ShareSessionError(Exception):
    def __init__(self, error: ErrorCode, message: str):
        super().__init__(message)
        self.error = error


# A failed timer write (a lock expiry) is tried again this much later, not at every tick.
RETRY_MS = 1000
# The timer task never spins faster than this, whatever the deadlines say.
MIN_TIMER_MS = 5


class ShareCoordinator:
    def __init__(self, logs, config, clock, group_configs, cluster):
        """`cluster`: where the share-partitions' state lives, each on the broker leading its
        `__share_group_state` partition (Kafka's partition leaders reach that share coordinator
        over the network; here `cluster.coordinator_runtime`)."""
        self.logs = logs
        self.config = config
        self.clock = clock
        self.group_configs = group_configs
        self.state_topic = InternalTopic(logs, SHARE_STATE_TOPIC, config["share.coordinator.state.topic.num.partitions"],
                                         TOPIC_CONFIGS, clock)
        self.runtime: CoordinatorRuntime[ShareStateShard] = CoordinatorRuntime(self.state_topic, lambda p: ShareStateShard())
        self.cluster = cluster
        # The share-partitions whose topic partition this broker leads: their records in flight.
        self.partitions: dict[SharePartitionKey, SharePartition] = {}
        self.sessions: dict[tuple[str, str], ShareSession] = {}
        self._wakeup = trio.Event()
        self._failing: dict[SharePartitionKey, int] = {}  # share-partitions whose timer write failed: retry at
        # The lock timer's queue, as Kafka's SystemTimer keeps its timer tasks: (when, seq, key)
        # for each share-partition whose earliest lock runs out then (or whose failed write is
        # retried then). A wake-up pops what is due and costs those share-partitions, not every
        # share-partition this broker holds; an entry made stale by an acknowledgement or a
        # later deadline is skipped when popped.
        self._timer: list[tuple[int, int, SharePartitionKey]] = []
        self._timer_seq = itertools.count()
        self._queued: dict[SharePartitionKey, int] = {}  # each one's earliest entry on the queue
        # The state topic's upkeep on the same timer: the next pruning and cold-snapshot rounds.
        now = clock.timer_ms()
        self._next_prune = now + config["share.coordinator.state.topic.prune.interval.ms"]
        self._next_cold = now + config["share.coordinator.cold.partition.snapshot.interval.ms"]
        self._state_partitions: dict[SharePartitionKey, int] = {}  # _partition_of, once each

    # --- settings -----------------------------------------------------------------------------

    def log_loaded(self) -> None:
        log.info("loaded %d share-partitions from %s", sum(len(s.written) for s in self.runtime), SHARE_STATE_TOPIC)

    def lock_ms(self, group_id: str) -> int:
        return self.group_configs.value(group_id, "share.record.lock.duration.ms")

    def delivery_limit(self, group_id: str) -> int:
        return self.group_configs.value(group_id, "share.delivery.count.limit")

    def max_in_flight(self, group_id: str) -> int:
        return self.group_configs.value(group_id, "share.partition.max.record.locks")

    # --- sessions -----------------------------------------------------------------------------

    def open_session(self, group_id: str, member_id: str, epoch: int, add, forget, connection: str) -> ShareSession:
        """The member's session after this request's epoch, partitions added and forgotten (the
        final epoch returns it unchanged: `close_session` ends it once the request's
        acknowledgements are applied). Raises ShareSessionError: SHARE_SESSION_NOT_FOUND,
        INVALID_SHARE_SESSION_EPOCH."""
        key = (group_id, member_id)
        if epoch == 0:
            session = self.sessions[key] = ShareSession(1, connection, set(add))
            return session
        session = self.sessions.get(key)
        if session is None:
            raise ShareSessionError(ErrorCode.SHARE_SESSION_NOT_FOUND, f"No share session for member {member_id}.")
        if epoch == FINAL_EPOCH:
            return session
        if epoch != session.epoch:
            raise ShareSessionError(ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                                    f"The share session epoch is {session.epoch}, not {epoch}.")
        session.epoch = session.epoch + 1 if session.epoch < 2**31 - 1 else 1
        session.partitions |= set(add)
        session.partitions -= set(forget)
        return session

    def close_session(self, group_id: str, member_id: str) -> None:
        """The session ends (its final epoch, or its connection closed): the records the member
        still holds in its partitions are released, and written."""
        session = self.sessions.pop((group_id, member_id), None)
        if session is None:
            return
        for topic_id, partition in sorted(session.partitions, key=lambda tp: (str(tp[0]), tp[1])):
            key = SharePartitionKey(group_id, topic_id, partition)
            if key in self.partitions:  # held in flight here, where its topic partition is led
                limit = self.delivery_limit(group_id)
                self.change(key, lambda sp: (sp.release_member(member_id, limit), ErrorCode.NONE)[1])

    def disconnected(self, connection: str) -> None:
        """A connection closed: every share session it opened ends, as Kafka's ShareSessionCache
        does on a disconnect."""
        for (group_id, member_id), session in list(self.sessions.items()):
            if session.connection == connection:
                self.close_session(group_id, member_id)

    # --- share-partitions ---------------------------------------------------------------------

    def _partition_of(self, key: SharePartitionKey) -> int:
        """The `__share_group_state` partition of a share-partition's state (Kafka's hash of
        "group:topic id:partition"), worked out once per share-partition."""
        found = self._state_partitions.get(key)
        if found is None:
            if len(self._state_partitions) >= 100_000:  # a cache: never more than this many
                self._state_partitions.clear()
            found = self._state_partitions[key] = self.state_topic.partition_for(
                f"{key.group_id}:{key.topic_id}:{key.partition}")
        return found

    def _runtime(self, key: SharePartitionKey) -> CoordinatorRuntime:
        """The runtime holding the share-partition's state: the one on the leader of its
        `__share_group_state` partition (NotCoordinator when it has none)."""
        return self.cluster.coordinator_runtime(SHARE_STATE_TOPIC, self._partition_of(key))

    def _runtimes(self) -> list[CoordinatorRuntime]:
        """Every runtime holding some share-partition state (all brokers' in a cluster)."""
        return self.cluster.coordinator_runtimes(SHARE_STATE_TOPIC)

    def _shard(self, key: SharePartitionKey) -> ShareStateShard:
        return self._runtime(key).shard(self._partition_of(key))

    def _everywhere(self) -> list["ShareCoordinator"]:
        """Every running broker's share coordinator (the leaders of the topic partitions)."""
        return [node.share_coordinator for node in self.cluster.running_nodes()]

    def _write(self, key: SharePartitionKey, state: SharePartition | None, what: str, *,
               whole: bool = False) -> ErrorCode:
        """The one way a share-partition's state changes: write its state (None: a tombstone) to
        `__share_group_state` through its share coordinator, what changed of it only (nothing
        when only volatile state moved: locks), then install it here, where the topic partition
        is led. `whole`: a ShareSnapshot even where a ShareUpdate would do, or nothing (a reset
        replaces the state). A failed write changes nothing, is logged and is the answer."""
        runtime, partition = self._runtime(key), self._partition_of(key)
        try:
            if state is None:
                self._append_state(runtime, partition, key, None)
            else:
                self._append_state(runtime, partition, key, state.snapshot(), whole=whole)
        except CoordinatorWriteError as exc:
            log.error("share-partition %s: cannot write %s: %s", key, what, exc.cause)
            return exc.error
        if state is None:
            self.partitions.pop(key, None)
        else:
            self.partitions[key] = state.installed()
        return ErrorCode.NONE

    def _append_state(self, runtime: CoordinatorRuntime, partition: int, key: SharePartitionKey, state, *,
                      whole: bool = False) -> None:
        """Append one state record of the share-partition to its `__share_group_state`
        partition and apply it to the shard: a tombstone (`state` None), a ShareSnapshot, or a
        ShareUpdate of what changed since the state last written; nothing when (start offset,
        state batches) is what was last written and `whole` is not asked. Raises
        CoordinatorWriteError."""
        shard = runtime.shard(partition)
        state_log = runtime.topic.logs.log(SHARE_STATE_TOPIC, partition)
        written = shard.written.get(key)
        changes = None
        if state is not None and written is not None and not whole:
            changes = tuple(formats.changed(written[1][1], state[1], state[0]))
            if not changes and written[1][0] == state[0]:
                return
        if state is None:
            record, apply = CoordinatorRecord(formats.key(key), None), lambda offset: shard.dropped(key)
        elif (changes is None or state_log.config.compact
              or shard.updates.get(key, 0) >= self.config["share.coordinator.snapshot.update.records.per.snapshot"]):
            epoch = written[0] + 1 if written is not None else 0
            start, batches = state
            record = CoordinatorRecord(formats.key(key), formats.value(ShareSnapshot(epoch, 0, start, tuple(batches))))

            def apply(offset: int) -> None:
                shard.snapshotted(key, epoch, start, batches, offset)
        else:
            epoch, start = written[0], state[0]
            record = CoordinatorRecord(formats.update_key(key), formats.update_value(ShareUpdate(epoch, start, changes)))

            def apply(offset: int) -> None:
                shard.updated(key, epoch, start, changes)
        runtime.write(partition, lambda s: CoordinatorResult([record], None, apply))

    def share_partition(self, key: SharePartitionKey, start_offset: int) -> ErrorCode:
        """Make sure the share-partition exists: at the group's first fetch of the partition it is
        created at `start_offset` (share.auto.offset.reset, fetching.py) and its first snapshot
        written (Kafka's InitializeShareGroupState), so a restart goes on from there."""
        if self.existing(key) is not None:
            return ErrorCode.NONE
        return self._write(key, SharePartition(start_offset), "its initial state")

    def existing(self, key: SharePartitionKey) -> SharePartition | None:
        """The share-partition as this broker, its topic partition's leader, has it: loaded from
        its durable state at first use (Kafka's SharePartition initializing from the persister)."""
        found = self.partitions.get(key)
        if found is None:
            written = self._shard(key).written.get(key)
            if written is not None:
                start, batches = written[1]
                found = self.partitions[key] = SharePartition.restore(start, list(batches))
        return found

    def leadership_lost(self, topic_id=None, partition: int | None = None) -> None:
        """This broker no longer leads the topic partition (None: any, it stopped): its records
        in flight there are dropped, as Kafka's SharePartitionManager drops a SharePartition on
        a leader change; the new leader starts from the durable state."""
        for key in [k for k in self.partitions if topic_id is None or (k.topic_id, k.partition) == (topic_id, partition)]:
            del self.partitions[key]
            self._failing.pop(key, None)
            self._queued.pop(key, None)

    def on_topic_deleted(self, topic_id) -> None:
        """The topic is gone (every broker, as Kafka's share coordinator and SharePartitionManager
        do): its share-partitions held in flight here go, and those whose state this broker's
        shards hold get tombstones."""
        for key in [k for k in self.partitions if k.topic_id == topic_id]:
            del self.partitions[key]
            self._failing.pop(key, None)
            self._queued.pop(key, None)
        for shard in self.runtime:
            for key in [k for k in shard.written if k.topic_id == topic_id]:
                self._write(key, None, "its topic's deletion")

    def change(self, key: SharePartitionKey, change, what: str = "its state") -> ErrorCode:
        """Apply `change(copy)` (which returns an error code, NONE to go on) to a copy of the
        share-partition; write the copy when its durable part differs from what was last
        written, then install it. A failed write leaves the share-partition as it was and is
        the answer."""
        current = self.existing(key)
        if current is None:
            return ErrorCode.INVALID_RECORD_STATE
        work = current.fork()
        error = change(work)
        if error:
            return error
        return self._write(key, work, what)

    def acknowledge(self, key: SharePartitionKey, member_id: str, batches, *, renew: bool = False) -> ErrorCode:
        """One partition's acknowledgement batches, all or nothing. With `renew` (IsRenewAck,
        v2) RENEW acknowledgements lock their records for another share.record.lock.duration.ms."""
        now = self.clock.timer_ms()
        renew_until = now + self.lock_ms(key.group_id) if renew else None
        limit = self.delivery_limit(key.group_id)

        def apply(sp: SharePartition) -> ErrorCode:
            sp.expire_locks(now, limit)
            for batch in batches:
                error = sp.acknowledge(member_id, batch.first_offset, batch.last_offset, list(batch.acknowledge_types),
                                       limit, renew_until)
                if error:
                    return error
            return ErrorCode.NONE
        error = self.change(key, apply)
        if renew_until is not None:
            self.locked(key)  # renewed locks run out later
        return error

    def release_member(self, group_id: str, member_id: str) -> None:
        """A member was removed from the group (its heartbeats stopped): the records it holds are
        available again. Its share session stays until its final epoch or its connection ends."""
        limit = self.delivery_limit(group_id)
        for leader in self._everywhere():
            for key in [k for k in leader.partitions if k.group_id == group_id]:
                leader.change(key, lambda sp: (sp.release_member(member_id, limit), ErrorCode.NONE)[1])

    # --- the acquisition lock timer -----------------------------------------------------------

    async def run(self) -> None:
        """The broker's lock timer task: expire what is due, sleep until the next lock deadline
        or until an acquisition or a clock move changes the deadlines."""
        while True:
            self._wakeup = trio.Event()
            now = self.clock.timer_ms()
            due = self.expire_due(now)
            timeout = math.inf if due is None else max(due - now, MIN_TIMER_MS) / 1000
            with trio.move_on_after(timeout):
                await self._wakeup.wait()

    def reschedule(self) -> None:
        """Re-check the lock deadlines now (records were acquired, or the broker clock moved)."""
        self._wakeup.set()

    def locked(self, key: SharePartitionKey) -> None:
        """Records of the share-partition were just locked: its earliest lock deadline goes on
        the timer's queue, and the timer looks again."""
        self._schedule(key)
        self.reschedule()

    def _schedule(self, key: SharePartitionKey) -> None:
        sp = self.partitions.get(key)
        due = sp.next_lock_deadline() if sp is not None else None
        if due is None:
            return
        due = max(due, self._failing.get(key, due))
        if due < self._queued.get(key, math.inf):  # a later entry would only wake the timer for nothing
            self._queued[key] = due
            heapq.heappush(self._timer, (due, next(self._timer_seq), key))

    def expire_due(self, now: int) -> int | None:
        """Every lock of this broker's share-partitions that ran out by `now` releases its
        records, written; the state topic's upkeep when its round is due; the next deadline (a
        lock's, a failed write's retry, or the next upkeep round)."""
        timer = self._timer
        while timer and timer[0][0] <= now:
            due, _, key = heapq.heappop(timer)
            if self._queued.get(key) != due:
                continue  # superseded by an earlier entry, which ran
            del self._queued[key]
            if key in self.partitions:
                self._expire_if_due(key, now)
                self._schedule(key)  # its next deadline, if it still holds locks
        if now >= self._next_cold:
            self._next_cold = now + self.config["share.coordinator.cold.partition.snapshot.interval.ms"]
            self.snapshot_cold()
        if now >= self._next_prune:
            self._next_prune = now + self.config["share.coordinator.state.topic.prune.interval.ms"]
            self.prune()
        return min(timer[0][0] if timer else math.inf, self._next_cold, self._next_prune)

    # --- the state topic's upkeep -------------------------------------------------------------

    def _kept_here(self):
        """(partition, shard, log) of each `__share_group_state` partition this broker leads and
        keeps itself: not compacted (compaction keeps a compacted one)."""
        for partition, shard in sorted(self.runtime.shards.items()):
            state_log = self.state_topic.logs.log(SHARE_STATE_TOPIC, partition)
            if not state_log.config.compact:
                yield partition, shard, state_log

    def snapshot_cold(self) -> None:
        """Kafka's cold-partition snapshots: in each `__share_group_state` partition this broker
        leads, a fresh ShareSnapshot of every share-partition that had none since the previous
        round, so that none holds the pruning point back for long."""
        for partition, shard, state_log in self._kept_here():
            mark, shard.cold_mark = shard.cold_mark, state_log.log_end_offset
            for key in [k for k, at in shard.snapshot_offsets.items() if at < mark and k in shard.written]:
                try:
                    self._append_state(self.runtime, partition, key, shard.written[key][1], whole=True)
                except CoordinatorWriteError as exc:
                    log.error("share-partition %s: cannot write its cold snapshot: %s", key, exc.cause)
                    return  # the next round tries again

    def prune(self) -> None:
        """Kafka's state-topic pruning: in each `__share_group_state` partition this broker
        leads, delete the records below the oldest latest snapshot of its share-partitions
        (all of them, up to the high watermark, when it holds none); followers follow the log
        start offset as they fetch."""
        for partition, shard, state_log in self._kept_here():
            below = shard.redundant_below()
            offset = min(state_log.high_watermark, state_log.high_watermark if below is None else below)
            if offset > state_log.log_start_offset:
                try:
                    state_log.delete_records_before(offset)
                except (StorageError, OSError) as exc:
                    log.error("%s-%d: cannot delete the records below %d: %s", SHARE_STATE_TOPIC, partition, offset, exc)

    def expire_locks(self, key: SharePartitionKey) -> None:
        """Before an acquisition: locks of this share-partition that ran out make their records
        available (written)."""
        self._expire_if_due(key, self.clock.timer_ms())

    def _expire_if_due(self, key: SharePartitionKey, now: int) -> None:
        """Expire the share-partition's locks that ran out by `now`, unless a failed write of
        them waits for its retry."""
        sp = self.existing(key)
        due = sp.next_lock_deadline() if sp is not None else None
        if due is None or due > now or self._failing.get(key, now) > now:
            return
        limit = self.delivery_limit(key.group_id)
        error = self.change(key, lambda work: (work.expire_locks(now, limit), ErrorCode.NONE)[1], "its expired locks")
        if error:
            if key not in self._failing:
                log.error("share-partition %s: its expired locks are kept until the state can be written "
                          "(tried again every %d ms)", key, RETRY_MS)
            self._failing[key] = now + RETRY_MS
        elif self._failing.pop(key, None) is not None:
            log.info("share-partition %s: its expired locks are written now", key)

    def describe(self, group_id: str, topic_name) -> list[dict]:
        """Each share-partition of the group for the console and /metrics: start and end
        offsets, records in flight by state and against the group's in-flight cap, how many
        in-flight records have each delivery count, and the acquired ones as runs of offsets
        held by one member with one delivery count and one lock deadline."""
        now = self.clock.timer_ms()
        rows = []
        for key, sp in sorted(self.group_partitions(group_id).items(), key=lambda kv: (str(kv[0].topic_id), kv[0].partition)):
            counts = {state.name.lower(): 0 for state in RecordState}
            deliveries: dict[int, int] = {}
            held: list[dict] = []
            for offset, entry in sp.in_flight_records():
                counts[entry.state.name.lower()] += 1
                if entry.delivery_count:
                    deliveries[entry.delivery_count] = deliveries.get(entry.delivery_count, 0) + 1
                if entry.state is not RecordState.ACQUIRED:
                    continue
                run = held[-1] if held else None
                if (run is not None and run["last_offset"] == offset - 1 and run["member_id"] == printable(entry.member_id)
                        and run["delivery_count"] == entry.delivery_count and run["lock_until_ms"] == entry.lock_deadline):
                    run["last_offset"] = offset
                    continue
                held.append({"first_offset": offset, "last_offset": offset, "member_id": printable(entry.member_id),
                             "delivery_count": entry.delivery_count, "lock_until_ms": entry.lock_deadline,
                             "lock_remaining_ms": max((entry.lock_deadline or now) - now, 0)})
            # Offsets from the end offset to the log end are available without an entry.
            rows.append({"topic": topic_name(key.topic_id) or str(key.topic_id), "partition": key.partition,
                         "start_offset": sp.start_offset, "end_offset": sp.end_offset, "records": counts,
                         "in_flight": sp.in_flight(), "max_in_flight": self.max_in_flight(group_id),
                         "delivery_counts": {str(count): n for count, n in sorted(deliveries.items())},
                         "max_delivery_count": max(deliveries, default=0), "acquired": held})
        return rows

    def group_partitions(self, group_id: str) -> dict[SharePartitionKey, SharePartition]:
        """The group's share-partitions: as their leaders hold them in flight, else as written."""
        found = {}
        for runtime in self._runtimes():
            for shard in runtime:
                for key, (_, (start, batches)) in shard.written.items():
                    if key.group_id == group_id:
                        found[key] = SharePartition.restore(start, list(batches))
        for leader in self._everywhere():
            found.update({k: sp for k, sp in leader.partitions.items() if k in found})
        return found

    def delete_group(self, group_id: str) -> ErrorCode:
        """Tombstones for every share-partition of the group (DeleteGroups)."""
        for key in list(self.group_partitions(group_id)):
            error = self.delete_partition(key)
            if error:
                return error
        return ErrorCode.NONE

    def delete_partition(self, key: SharePartitionKey) -> ErrorCode:
        """A tombstone for one share-partition (DeleteShareGroupOffsets, DeleteGroups): the
        group's next fetch of it starts again by share.auto.offset.reset."""
        return self._replace_everywhere(key, None, "its deletion")

    def reset_partition(self, key: SharePartitionKey, start_offset: int) -> ErrorCode:
        """A new start offset for one share-partition of an empty group, nothing in flight
        (AlterShareGroupOffsets): written as a fresh snapshot, then installed."""
        return self._replace_everywhere(key, SharePartition(start_offset), "its new start offset")

    def _replace_everywhere(self, key: SharePartitionKey, state: SharePartition | None, what: str) -> ErrorCode:
        """An admin request (on any broker) replaces the durable state: written (a whole
        snapshot), then whichever broker holds it in flight takes it from there at its next use."""
        error = self._write(key, state, what, whole=True)
        if not error:
            for leader in self._everywhere():
                leader.partitions.pop(key, None)
        return error
