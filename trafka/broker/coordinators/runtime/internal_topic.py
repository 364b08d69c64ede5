"""An internal topic a coordinator keeps its state in: created, appended to, replayed.

One class for every such topic (`__consumer_offsets`, `__transaction_state`, and the next ones):
created at start-up if missing with the coordinator's configs (an existing topic keeps its
partition count, as in Kafka), a key lives in partition abs(javaHashCode(key)) % partitions,
appends are synchronous (a write is answered only once its batch is in the log), and replay
walks one partition from its log start offset to its high watermark.

Transactional batches (TxnOffsetCommit writes them to `__consumer_offsets`) are held back at
replay until their producer's COMMIT marker and dropped at its ABORT, as Kafka's loader does;
those still open when the replay ends are left in `pending(partition)`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Generator, Iterable, Iterator

from trafka.broker.coordinators.runtime.records import CoordinatorRecord
from trafka.storage.log_read import replay_log
from trafka.wire import records as rec

log = logging.getLogger("trafka.coordinator")

# Kafka's Topic.INTERNAL_TOPICS, the coordinators' topics: clients may not produce to them
# (INVALID_TOPIC_EXCEPTION) nor delete their records, and regular expressions leave them out.
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


@dataclass(frozen=True)
class LoggedRecord:
    """A record read back from an internal topic."""

    offset: int
    key: bytes
    value: bytes | None
    producer_id: int = -1


def java_string_hash(text: str) -> int:
    """Java's String.hashCode over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(key: str, partitions: int) -> int:
    """Kafka's Utils.abs(key.hashCode()) % partitions (abs of MIN_VALUE is 0 there)."""
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


class InternalTopic:
    def __init__(self, logs, name: str, wanted_partitions: int, configs: dict[str, str], clock):
        self.logs = logs
        self.name = name
        self.clock = clock
        self.partitions = logs.ensure_topic(name, wanted_partitions, configs).partitions
        # Called before each append with (topic, partition); raises to refuse it (injected
        # storage faults: FaultTable.check_append).
        self.append_guard = None
        # partition -> producer id -> records of its still open transaction, after replay
        self._pending: dict[int, dict[int, list[LoggedRecord]]] = {}

    def partition_for(self, key: str) -> int:
        return partition_for(key, self.partitions)

    def append(self, partition: int, records: Iterable[CoordinatorRecord], *,
               producer_id: int = -1, producer_epoch: int = -1) -> int:
        """Write `records` as one batch (transactional with a producer id); the offset of its
        first record. Raises the storage errors of PartitionLog.append; nothing is written then."""
        if self.append_guard is not None:
            self.append_guard(self.name, partition)
        now = self.clock.time_ms()
        batch = rec.encode_batch(
            [rec.Record(r.key, r.value, (), now) for r in records],
            producer_id=producer_id, producer_epoch=producer_epoch, transactional=producer_id >= 0,
        )
        # In a simulated cluster the append reaches the in-sync followers before it returns
        # (the replica layer's on_append: Replication.appended), so before the coordinator
        # applies and answers.
        return self.logs.log(self.name, partition).append(batch).base_offset

    def append_marker(self, partition: int, producer_id: int, producer_epoch: int, commit: bool,
                      coordinator_epoch: int) -> None:
        if self.append_guard is not None:
            self.append_guard(self.name, partition)
        self.logs.log(self.name, partition).append_control(producer_id, producer_epoch, commit, coordinator_epoch)

    def replay(self, partition: int) -> Iterator[LoggedRecord]:
        """Every committed record of `partition` in log order; open transactions' records are
        left in `pending(partition)`."""
        pending = self._pending[partition] = {}
        yield from replay_log(self.logs.log(self.name, partition),
                              lambda data, offset: committed_records(data, offset, pending, self.name, partition))

    def pending(self, partition: int) -> dict[int, list[LoggedRecord]]:
        """producer id -> the records of its transaction still open when `replay` ended."""
        return self._pending.get(partition, {})


def committed_records(data: bytes, offset: int, pending: dict[int, list[LoggedRecord]], topic: str,
                      partition: int) -> Generator[LoggedRecord, None, int]:
    """The records with a key in the whole batches of `data` from `offset` on, transactional
    ones once their producer's COMMIT marker comes; returns the offset after the last batch.
    The one batch walker of every internal topic, online (InternalTopic.replay) and offline
    (runtime/offline.py)."""
    for pos, header in rec.iter_batches(data, validate=False):
        if header.is_control:
            if header.base_offset >= offset:
                held = pending.pop(header.producer_id, [])
                try:
                    if rec.control_type(data, pos) == rec.CONTROL_COMMIT:
                        yield from held
                except rec.CorruptRecordError as exc:
                    log.warning("%s-%d offset %d: unreadable marker: %s", topic, partition, header.base_offset, exc)
        else:
            held = pending.setdefault(header.producer_id, []) if header.is_transactional else None
            for record in rec.decode_records(data, pos):
                if record.offset < offset or record.key is None:
                    continue
                logged = LoggedRecord(record.offset, record.key, record.value, header.producer_id)
                if held is not None:
                    held.append(logged)
                else:
                    yield logged
        offset = header.next_offset
    return offset
