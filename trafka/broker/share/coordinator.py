"""The share coordinator: every share-partition's durable state, in `__share_group_state`,
on the coordinator runtime; and the share sessions of ShareFetch / ShareAcknowledge.

A share-partition is (share group, topic id, partition). It lives in the `__share_group_state`
partition its key "group:topicId:partition" hashes to, as Kafka's share coordinator keys it,
and each such partition is one `ShareStateShard`. Its state (`partition.SharePartition`) is
created at the group's first fetch of the partition, starting at the log end offset
(`share.auto.offset.reset` latest, Kafka's default) or the log start (earliest).

Write, then apply: an acknowledgement (or a lock expiry or a member leaving that archives
records) is applied to a copy of the share-partition; the copy's snapshot (formats.py) is
written; only then does the copy replace the share-partition. A failed write leaves it as it
was and the acknowledgement is answered with the error. Acquisitions are not written: after a
restart, records acquired but not acknowledged are available again, as in Kafka.

A share-partition is written first when it is created (its start offset), then at each
durable change.

Share sessions (KIP-932): a member's ShareFetch with epoch 0 opens a session on the partitions
it names, each later request carries the next epoch and may add partitions or forget them, -1
closes it. Sessions are in memory, as Kafka's ShareSessionCache.
"""

from __future__ import annotations

import copy
import logging
import uuid
from dataclasses import dataclass, field

from trafka.broker.runtime.internal_topic import InternalTopic
from trafka.broker.runtime.records import CoordinatorRecord, CoordinatorResult
from trafka.broker.runtime.runtime import CoordinatorRuntime, CoordinatorWriteError
from trafka.broker.share import formats
from trafka.broker.share.formats import SharePartitionKey, ShareSnapshot
from trafka.broker.share.partition import RecordState, SharePartition
from trafka.wire.text import printable
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.share")

SHARE_STATE_TOPIC = "__share_group_state"
TOPIC_CONFIGS = {"cleanup.policy": "compact", "segment.bytes": str(100 * 1024 * 1024)}
FINAL_EPOCH = -1


class ShareStateShard:
    """The share-partitions of one `__share_group_state` partition."""

    def __init__(self) -> None:
        self.partitions: dict[SharePartitionKey, SharePartition] = {}
        self.snapshot_epochs: dict[SharePartitionKey, int] = {}

    def replay(self, key: bytes, value: bytes | None) -> None:
        k = formats.parse_key(key)
        if value is None:
            self.partitions.pop(k, None)
            self.snapshot_epochs.pop(k, None)
            return
        snapshot = formats.parse_value(value)
        self.partitions[k] = SharePartition.restore(snapshot.start_offset, list(snapshot.batches))
        self.snapshot_epochs[k] = snapshot.snapshot_epoch


@dataclass
class ShareSession:
    epoch: int  # the epoch the next request must carry
    partitions: set[tuple[uuid.UUID, int]] = field(default_factory=set)


class ShareSessionError(Exception):
    def __init__(self, error: ErrorCode, message: str):
        super().__init__(message)
        self.error = error


class ShareCoordinator:
    def __init__(self, logs, config, clock, group_configs, *, leads=None):
        self.logs = logs
        self.config = config
        self.clock = clock
        self.group_configs = group_configs
        self.state_topic = InternalTopic(logs, SHARE_STATE_TOPIC, config["share.coordinator.state.topic.num.partitions"],
                                         TOPIC_CONFIGS, clock)
        self.runtime: CoordinatorRuntime[ShareStateShard] = CoordinatorRuntime(self.state_topic, lambda p: ShareStateShard())
        self.runtime.load_all(leads)
        self.sessions: dict[tuple[str, str], ShareSession] = {}
        # A simulated cluster routes each share-partition to the runtime of the broker leading
        # its state partition (`route(partition)`), and group-wide work to all (`everywhere()`).
        self.route = None
        self.everywhere = None
        log.info("loaded %d share-partitions from %s", sum(len(s.partitions) for s in self.runtime), SHARE_STATE_TOPIC)

    # --- settings -----------------------------------------------------------------------------

    def lock_ms(self, group_id: str) -> int:
        return self.group_configs.value(group_id, "share.record.lock.duration.ms")

    @property
    def delivery_limit(self) -> int:
        return self.config["group.share.delivery.count.limit"]

    # --- sessions -----------------------------------------------------------------------------

    def open_session(self, group_id: str, member_id: str, epoch: int, add, forget) -> ShareSession:
        """The member's session after this request's epoch, partitions added and forgotten.
        Raises ShareSessionError: SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH."""
        key = (group_id, member_id)
        if epoch == 0:
            session = self.sessions[key] = ShareSession(1, set(add))
            return session
        session = self.sessions.get(key)
        if session is None:
            raise ShareSessionError(ErrorCode.SHARE_SESSION_NOT_FOUND, f"No share session for member {member_id}.")
        if epoch == FINAL_EPOCH:
            del self.sessions[key]
            return session
        if epoch != session.epoch:
            raise ShareSessionError(ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                                    f"The share session epoch is {session.epoch}, not {epoch}.")
        session.epoch = session.epoch + 1 if session.epoch < 2**31 - 1 else 1
        session.partitions |= set(add)
        session.partitions -= set(forget)
        return session

    def close_sessions(self, group_id: str, member_id: str) -> None:
        self.sessions.pop((group_id, member_id), None)

    # --- share-partitions ---------------------------------------------------------------------

    def _partition_of(self, key: SharePartitionKey) -> int:
        return self.state_topic.partition_for(f"{key.group_id}:{key.topic_id}:{key.partition}")

    def _runtime(self, key: SharePartitionKey) -> CoordinatorRuntime:
        """The runtime holding the share-partition's state: this broker's, or in a simulated
        cluster the one on the leader of its `__share_group_state` partition (`route`; Kafka's
        partition leaders reach the share coordinator over the network)."""
        return self.runtime if self.route is None else self.route(self._partition_of(key))

    def _runtimes(self) -> list[CoordinatorRuntime]:
        """Every runtime holding some share-partition state (all brokers' in a cluster)."""
        return [self.runtime] if self.everywhere is None else self.everywhere()

    def _shard(self, key: SharePartitionKey) -> ShareStateShard:
        return self._runtime(key).shard(self._partition_of(key))

    def share_partition(self, key: SharePartitionKey, start_offset: int) -> ErrorCode:
        """Make sure the share-partition exists: at the group's first fetch of the partition it is
        created at `start_offset` (share.auto.offset.reset, fetching.py) and its first snapshot
        written (Kafka's InitializeShareGroupState), so a restart goes on from there."""
        shard = self._shard(key)
        if key in shard.partitions:
            return ErrorCode.NONE
        created = SharePartition(start_offset)
        record = CoordinatorRecord(formats.key(key), formats.value(ShareSnapshot(0, 0, created.start_offset, ())))

        def apply() -> None:
            shard.partitions[key] = created
            shard.snapshot_epochs[key] = 0
        try:
            self._runtime(key).write(self._partition_of(key), lambda s: CoordinatorResult([record], None, apply))
        except CoordinatorWriteError as exc:
            log.error("share-partition %s: cannot write its initial state: %s", key, exc.cause)
            return exc.error
        return ErrorCode.NONE

    def existing(self, key: SharePartitionKey) -> SharePartition | None:
        return self._shard(key).partitions.get(key)

    def change(self, key: SharePartitionKey, change) -> ErrorCode:
        """Apply `change(copy)` (which returns an error code, NONE to go on) to a copy of the
        share-partition, write the copy's snapshot, then install the copy. A failed write
        leaves the share-partition as it was and is the answer."""
        shard = self._shard(key)
        current = shard.partitions.get(key)
        if current is None:
            return ErrorCode.INVALID_RECORD_STATE
        work = copy.deepcopy(current)
        error = change(work)
        if error:
            return error
        if work.snapshot() == current.snapshot():
            shard.partitions[key] = work  # only volatile state moved (locks): nothing to write
            return ErrorCode.NONE
        epoch = shard.snapshot_epochs.get(key, -1) + 1
        start, batches = work.snapshot()
        record = CoordinatorRecord(formats.key(key), formats.value(ShareSnapshot(epoch, 0, start, tuple(batches))))

        def apply() -> None:
            shard.partitions[key] = work
            shard.snapshot_epochs[key] = epoch
        try:
            self._runtime(key).write(self._partition_of(key), lambda s: CoordinatorResult([record], None, apply))
        except CoordinatorWriteError as exc:
            log.error("share-partition %s: cannot write its state: %s", key, exc.cause)
            return exc.error
        return ErrorCode.NONE

    def acknowledge(self, key: SharePartitionKey, member_id: str, batches, *, renew: bool = False) -> ErrorCode:
        """One partition's acknowledgement batches, all or nothing. With `renew` (IsRenewAck,
        v2) RENEW acknowledgements lock their records for another share.record.lock.duration.ms."""
        now = self.clock.time_ms()
        renew_until = now + self.lock_ms(key.group_id) if renew else None

        def apply(sp: SharePartition) -> ErrorCode:
            sp.expire_locks(now, self.delivery_limit)
            for batch in batches:
                error = sp.acknowledge(member_id, batch.first_offset, batch.last_offset, list(batch.acknowledge_types),
                                       self.delivery_limit, renew_until)
                if error:
                    return error
            return ErrorCode.NONE
        return self.change(key, apply)

    def release_member(self, group_id: str, member_id: str) -> None:
        """A member left: its acquired records are available again; its session goes."""
        self.close_sessions(group_id, member_id)
        for shard in [shard for runtime in self._runtimes() for shard in runtime]:
            for key in [k for k in shard.partitions if k.group_id == group_id]:
                self.change(key, lambda sp: (sp.release_member(member_id, self.delivery_limit), ErrorCode.NONE)[1])

    def expire_locks(self, key: SharePartitionKey) -> None:
        """Locks that ran out make their records available (written when that archives some)."""
        sp = self.existing(key)
        now = self.clock.time_ms()
        due = sp.next_lock_deadline() if sp is not None else None
        if due is not None and due <= now:
            self.change(key, lambda work: (work.expire_locks(now, self.delivery_limit), ErrorCode.NONE)[1])

    def describe(self, group_id: str, topic_name) -> list[dict]:
        """Each share-partition of the group for the console and /metrics: start offset, records
        in flight by state, the acquired ones with their member, delivery count and lock."""
        now = self.clock.time_ms()
        rows = []
        for key, sp in sorted(self.group_partitions(group_id).items(), key=lambda kv: (str(kv[0].topic_id), kv[0].partition)):
            counts = {state.name.lower(): 0 for state in RecordState}
            acquired = []
            for offset, entry in sorted(sp.records.items()):
                counts[entry.state.name.lower()] += 1
                if entry.state is RecordState.ACQUIRED:
                    acquired.append({"offset": offset, "member_id": printable(entry.member_id), "delivery_count": entry.delivery_count,
                                     "lock_remaining_ms": max((entry.lock_deadline or now) - now, 0)})
            rows.append({"topic": topic_name(key.topic_id) or str(key.topic_id), "partition": key.partition,
                         "start_offset": sp.start_offset, "end_offset": sp.end_offset, "records": counts,
                         "max_delivery_count": max((e.delivery_count for e in sp.records.values()), default=0),
                         "acquired": acquired})
        return rows

    def group_partitions(self, group_id: str) -> dict[SharePartitionKey, SharePartition]:
        return {k: sp for runtime in self._runtimes() for shard in runtime
                for k, sp in shard.partitions.items() if k.group_id == group_id}

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
        shard = self._shard(key)

        def apply() -> None:
            shard.partitions.pop(key, None)
            shard.snapshot_epochs.pop(key, None)
        try:
            self._runtime(key).write(self._partition_of(key), lambda s: CoordinatorResult(
                [CoordinatorRecord(formats.key(key), None)], None, apply))
        except CoordinatorWriteError as exc:
            log.error("share-partition %s: cannot delete its state: %s", key, exc.cause)
            return exc.error
        return ErrorCode.NONE

    def reset_partition(self, key: SharePartitionKey, start_offset: int) -> ErrorCode:
        """A new start offset for one share-partition of an empty group, nothing in flight
        (AlterShareGroupOffsets): written as a fresh snapshot, then installed."""
        shard = self._shard(key)
        fresh = SharePartition(start_offset)
        epoch = shard.snapshot_epochs.get(key, -1) + 1
        record = CoordinatorRecord(formats.key(key), formats.value(ShareSnapshot(epoch, 0, start_offset, ())))

        def apply() -> None:
            shard.partitions[key] = fresh
            shard.snapshot_epochs[key] = epoch
        try:
            self._runtime(key).write(self._partition_of(key), lambda s: CoordinatorResult([record], None, apply))
        except CoordinatorWriteError as exc:
            log.error("share-partition %s: cannot write its new start offset: %s", key, exc.cause)
            return exc.error
        return ErrorCode.NONE
