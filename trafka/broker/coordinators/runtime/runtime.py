"""The coordinator runtime: write the records first, change the state after.

Kafka's group coordinator, transaction coordinator and share coordinator all run on one
`CoordinatorRuntime`; trafka's do too. The state of a coordinator is held per partition of its
internal topic (a *shard*): every group or transactional id lives in the partition its key
hashes to, and that partition's records, replayed in order, are the shard's state.

An operation is a function of the shard that changes nothing and returns a `CoordinatorResult`:
the records to append and the response. `CoordinatorRuntime.write` appends the records to the
shard's partition as one batch and only then applies them (the result's `apply()`, or
`shard.replay` of each record, the code that loaded the shard) and returns the response. When
the append fails nothing was applied: `write` raises `CoordinatorWriteError` carrying the
error Kafka answers for it (`trafka.broker.requests.errors.coordinator_write_error`: NOT_COORDINATOR for
a failed disk, COORDINATOR_NOT_AVAILABLE otherwise, as Kafka's runtime maps storage errors).

Operations run one at a time per runtime without any lock: `write` is synchronous (the append
of an internal topic is a synchronous call), so no other task runs between an operation, its
append and its apply.

A shard is loaded by replaying its partition (`load`) and unloaded (`unload`) as the broker
comes to lead the partition and stops leading it (the cluster calls them: Kafka's onElection
and onResignation), which is how a coordinator moves between brokers. How a coordinator plugs in:

    class MyShard:                      # one per internal-topic partition
        def replay(self, key: bytes, value: bytes | None, offset: int = -1) -> None: ...  # the only state change
        def loaded(self) -> None: ...   # optional: replay is over (start sessions, timers)
        def unloaded(self) -> None: ... # optional

    topic = InternalTopic(logs, "__my_state", partitions, {"cleanup.policy": "compact"}, clock)
    runtime = CoordinatorRuntime(topic, lambda partition: MyShard())
    runtime.load(partition)             # the cluster's doing, for each partition the broker leads
    response = runtime.write(topic.partition_for(key), lambda shard: CoordinatorResult(records, response))
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Callable, Generic, Iterator, Protocol, TypeVar

from trafka.broker.requests.errors import coordinator_write_error
from trafka.broker.coordinators.runtime.internal_topic import InternalTopic
from trafka.broker.coordinators.runtime.records import CoordinatorResult, UnknownRecord
from trafka.storage import errors as storage_errors
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.coordinator")


class CoordinatorShard(Protocol):
    # `offset`: the record's offset in the partition (Kafka's replay gets it too), -1 when an
    # operation's own apply() replays records it wrote.
    def replay(self, key: bytes, value: bytes | None, offset: int = -1) -> None: ...


S = TypeVar("S", bound=CoordinatorShard)


class CoordinatorWriteError(Exception):
    """The records of an operation could not be written; nothing was applied."""

    def __init__(self, error: ErrorCode, cause: BaseException):
        super().__init__(f"{error.name}: {cause}")
        self.error = error
        self.cause = cause


class NotCoordinator(Exception):
    """The shard of this partition is not loaded here."""

    error = ErrorCode.NOT_COORDINATOR


class CoordinatorRuntime(Generic[S]):
    def __init__(self, topic: InternalTopic, new_shard: Callable[[int], S]):
        self.topic = topic
        self._new_shard = new_shard
        self.shards: dict[int, S] = {}
        # The coordinator's own step once a shard is loaded and serving (the transaction
        # coordinator finishes the commits and aborts the shard's last leader left).
        self.on_loaded: Callable[[int], None] | None = None

    # --- shards ----------------------------------------------------------------------------

    def load(self, partition: int) -> S:
        """Build the shard of `partition` by replaying it; records it cannot read are skipped
        with a log line, as Kafka's loader does."""
        shard = self._new_shard(partition)
        for record in self.topic.replay(partition):
            try:
                shard.replay(record.key, record.value, record.offset)
            except UnknownRecord as exc:
                log.warning("%s-%d offset %d: skipping record: %s", self.topic.name, partition, record.offset, exc)
        loaded = getattr(shard, "loaded", None)
        if loaded is not None:
            loaded()
        self.shards[partition] = shard
        if self.on_loaded is not None:
            self.on_loaded(partition)
        return shard

    def unload(self, partition: int) -> None:
        shard = self.shards.pop(partition, None)
        unloaded = getattr(shard, "unloaded", None)
        if unloaded is not None:
            unloaded()

    def shard(self, partition: int) -> S:
        try:
            return self.shards[partition]
        except KeyError:
            raise NotCoordinator(f"{self.topic.name}-{partition} is not loaded here") from None

    def shard_for(self, key: str) -> S:
        return self.shard(self.topic.partition_for(key))

    def __iter__(self) -> Iterator[S]:
        return iter(list(self.shards.values()))

    # --- writes ----------------------------------------------------------------------------

    def write(self, partition: int, op: Callable[[S], CoordinatorResult], *,
              producer_id: int = -1, producer_epoch: int = -1):
        """Run `op` on the shard, append its records, apply them, return its response.
        Raises CoordinatorWriteError (nothing applied) when the append fails."""
        shard = self.shard(partition)
        result = op(shard)
        base_offset = -1
        if result.records:
            try:
                base_offset = self.topic.append(partition, result.records, producer_id=producer_id,
                                                producer_epoch=producer_epoch)
            except (storage_errors.StorageError, OSError) as exc:
                log.error("%s-%d: cannot write %d records: %s", self.topic.name, partition, len(result.records), exc)
                raise CoordinatorWriteError(coordinator_write_error(exc), exc) from None
        self._apply(shard, result, base_offset)
        return result.response

    def write_marker(self, partition: int, producer_id: int, producer_epoch: int, commit: bool,
                     coordinator_epoch: int, apply: Callable[[S], None]) -> None:
        """Append a transaction marker to the partition, then `apply(shard)` (the records of the
        producer's transaction become committed, or are dropped). Raises CoordinatorWriteError."""
        shard = self.shard(partition)
        try:
            self.topic.append_marker(partition, producer_id, producer_epoch, commit, coordinator_epoch)
        except (storage_errors.StorageError, OSError) as exc:
            log.error("%s-%d: cannot write a transaction marker: %s", self.topic.name, partition, exc)
            raise CoordinatorWriteError(coordinator_write_error(exc), exc) from None
        apply(shard)

    @staticmethod
    def _apply(shard: S, result: CoordinatorResult, base_offset: int) -> None:
        if result.apply is not None:
            result.apply(base_offset)
        else:
            for i, record in enumerate(result.records):
                shard.replay(record.key, record.value, base_offset + i)


class ShardMap(MutableMapping):
    """One attribute (a dict keyed by group or transactional id) of every loaded shard, as one
    mapping routed by key: callers ask `groups[group_id]` and never which shard holds it;
    unloading a shard takes its entries away."""

    def __init__(self, runtime: CoordinatorRuntime, attribute: str):
        self._runtime = runtime
        self._attribute = attribute

    def _map(self, key: str) -> dict:
        return getattr(self._runtime.shard_for(key), self._attribute)

    def __getitem__(self, key: str):
        return self._map(key)[key]

    def __setitem__(self, key: str, value) -> None:
        self._map(key)[key] = value

    def __delitem__(self, key: str) -> None:
        del self._map(key)[key]

    def __contains__(self, key) -> bool:
        try:
            return key in self._map(key)
        except NotCoordinator:  # a shard not loaded here holds nothing
            return False

    def __iter__(self) -> Iterator[str]:
        for shard in self._runtime:
            yield from list(getattr(shard, self._attribute))

    def __len__(self) -> int:
        return sum(len(getattr(shard, self._attribute)) for shard in self._runtime)
