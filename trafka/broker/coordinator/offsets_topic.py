"""`__consumer_offsets`: where committed offsets and group metadata are written and replayed.

Created at startup if missing (compacted, offsets.topic.num.partitions partitions, Kafka's
100 MiB segments). A group lives in one partition, abs(hashCode(group)) % partitions, so all
of a group's records are in order in one log. Writes are synchronous appends: a commit is
answered after its records are in the log.

Transactional offset commits (TxnOffsetCommit) are transactional batches of the producer;
replay holds them back until the partition's COMMIT marker for that producer (an ABORT drops
them), and leaves those still open in `pending`, as Kafka's loader does.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Generator, Iterator

from trafka.broker.coordinator.formats import GroupKey, OffsetKey, UnknownRecord, parse_key, partition_for
from trafka.storage.inspect import replay_topic
from trafka.storage.log import replay_log
from trafka.wire import records as rec

log = logging.getLogger("trafka.coordinator")

OFFSETS_TOPIC = "__consumer_offsets"
TOPIC_CONFIGS = {"cleanup.policy": "compact", "segment.bytes": str(100 * 1024 * 1024)}


class OffsetsTopic:
    def __init__(self, logs, wanted_partitions: int, clock):
        self.logs = logs
        self.clock = clock
        # After replay: partition -> producer id -> (key, value) of its still open transaction.
        self.pending: dict[int, dict[int, list[tuple[OffsetKey | GroupKey, bytes | None]]]] = {}
        # An existing topic keeps its count even if offsets.topic.num.partitions changed since.
        self.partitions = logs.ensure_topic(OFFSETS_TOPIC, wanted_partitions, TOPIC_CONFIGS).partitions

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.partitions)

    def append(
        self, group_id: str, entries: list[tuple[bytes, bytes | None]], *, producer_id: int = -1, producer_epoch: int = -1
    ) -> None:
        """Write (key, value) records of one group as one batch; None values are tombstones.
        With a producer id the batch is transactional (TxnOffsetCommit).

        Raises the storage errors of PartitionLog.append.
        """
        if not entries:
            return
        now = self.clock.time_ms()
        batch = rec.encode_batch(
            [rec.Record(key, value, (), now) for key, value in entries],
            producer_id=producer_id, producer_epoch=producer_epoch, transactional=producer_id >= 0,
        )
        self.logs.log(OFFSETS_TOPIC, self.partition_for(group_id)).append(batch)

    def append_marker(self, partition: int, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int) -> None:
        self.logs.log(OFFSETS_TOPIC, partition).append_control(producer_id, producer_epoch, commit, coordinator_epoch)

    def replay(self) -> Iterator[tuple[OffsetKey | GroupKey, bytes | None]]:
        """Every (key, value) in log order, partition by partition; unknown keys are skipped."""
        for partition in range(self.partitions):
            pending = self.pending.setdefault(partition, {})
            yield from replay_log(self.logs.log(OFFSETS_TOPIC, partition),
                                  lambda data, offset: _entries(data, offset, partition, pending))


def replay_data_dir(data_dir: Path) -> Iterator[tuple[OffsetKey | GroupKey, bytes | None]]:
    """What `OffsetsTopic.replay` yields, read from a data directory's segment files read-only
    and without its lock, so it works beside a running broker. A batch being written at that
    moment is cut off at the end of the active segment and left out."""
    return replay_topic(Path(data_dir), OFFSETS_TOPIC, lambda data, offset, partition: _entries(data, offset, partition, {}))


def _entries(
    data: bytes, offset: int, partition: int, pending: dict[int, list]
) -> Generator[tuple[OffsetKey | GroupKey, bytes | None], None, int]:
    """The (key, value) of every record from `offset` on in whole batches; returns the offset
    after the last batch. Transactional records wait in `pending` for their marker."""
    for pos, header in rec.iter_batches(data, validate=False):
        if header.is_control:
            if header.base_offset >= offset:
                held = pending.pop(header.producer_id, [])
                try:
                    if rec.control_type(data, pos) == rec.CONTROL_COMMIT:
                        yield from held
                except rec.CorruptRecordError as exc:
                    log.warning("%s-%d offset %d: unreadable marker: %s", OFFSETS_TOPIC, partition, header.base_offset, exc)
        else:
            held = pending.setdefault(header.producer_id, []) if header.is_transactional else None
            for record in rec.decode_records(data, pos):
                if record.offset < offset or record.key is None:
                    continue
                try:
                    key = parse_key(record.key)
                except UnknownRecord as exc:
                    log.warning("%s-%d offset %d: skipping record: %s", OFFSETS_TOPIC, partition, record.offset, exc)
                    continue
                if held is not None:
                    held.append((key, record.value))
                else:
                    yield key, record.value
        offset = header.next_offset
    return offset
