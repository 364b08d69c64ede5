"""LogCleaner: log compaction, scaled down from Kafka's LogCleaner.

A compacted log has two parts: the clean part, already compacted, where every key appears at
most once, and the dirty part written since the last clean, which may repeat keys. The
boundary (the first dirty offset) is checkpointed per partition in `cleaner-offset-checkpoint`.
The active segment, and every segment from the first one holding a record younger than
min.compaction.lag.ms, are never cleaned; the first of those is the first uncleanable offset.

A pass over one partition:
1. Build an offset map over the dirty part: key -> the offset of its latest record.
2. Copy every segment below the first uncleanable offset into a cleaned segment, keeping a
   record only if no later record has its key. Offsets never change. A batch that keeps all
   its records is copied byte for byte; one that loses some is re-encoded with the kept
   records and the original batch's base offset, offset range, compression, timestamp type,
   partition leader epoch and producer id/epoch/base sequence; one that loses all is dropped.
   Tombstones (null value) are kept until their segment's newest record is older than
   delete.retention.ms, so consumers have that long to see a delete. Records without a key
   are dropped, as Kafka does.
3. Consecutive small segments are merged while the result fits segment.bytes. Each cleaned
   segment is written beside the old ones (`.cleaned`) and swapped in with
   `segment_swap.replace_segments`, so a crash at any moment loses nothing.

A partition is cleaned when its dirty share of bytes reaches min.cleanable.dirty.ratio, when its
oldest dirty record is older than max.compaction.lag.ms, or when tombstones it kept last time
have passed delete.retention.ms. Unlike Kafka, the offset map is a dict of every dirty key (no
dedupe-buffer limit).

A pass has three steps so the broker keeps serving while it runs: `plan` (on the broker's loop:
what to clean, over a snapshot of the segment list), `write` (in a worker thread: the offset
map and the cleaned segments, fsynced; closed segments are read-only, so the loop's appends and
reads go on), `finish` (on the loop: each cleaned segment swapped in, unless retention or
DeleteTopics removed what it replaces meanwhile, then it is dropped). `clean` runs the three in
a row, for callers without a loop.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from trafka.storage.log import PartitionLog
from trafka.storage.log_loader import read_checkpoint, write_checkpoint
from trafka.storage.segment_swap import new_cleaned_segment, prepare_swap, swap_in
from trafka.storage.retention import segment_largest_timestamp
from trafka.storage.segment import LogSegment
from trafka.wire import records as rec

log = logging.getLogger("trafka.storage")

CLEANER_CHECKPOINT_FILE = "cleaner-offset-checkpoint"
NO_DEADLINE = 2**63 - 1


@dataclass(frozen=True)
class CleanableRange:
    first_dirty_offset: int
    first_uncleanable_offset: int
    dirty_bytes: int
    clean_bytes: int

    @property
    def dirty_ratio(self) -> float:
        total = self.dirty_bytes + self.clean_bytes
        return self.dirty_bytes / total if total else 0.0


@dataclass
class CleanerStats:
    segments_read: int = 0
    segments_written: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    records_read: int = 0
    records_removed: int = 0
    tombstones_removed: int = 0


def first_dirty_offset(partition_log: PartitionLog) -> int:
    checkpoint = read_checkpoint(partition_log.directory / CLEANER_CHECKPOINT_FILE) or 0
    return max(checkpoint, partition_log.log_start_offset)


SegmentsWithEnds = list[tuple[LogSegment, int]]


def _segments_with_ends(partition_log: PartitionLog) -> SegmentsWithEnds:
    """Each segment with the end of its offset range: the next segment's base offset (a
    cleaned segment can end before it), the log end offset for the active one."""
    segments = partition_log.segments
    ends = [s.base_offset for s in segments[1:]] + [partition_log.log_end_offset]
    return list(zip(segments, ends))


def cleanable_range(partition_log: PartitionLog, now_ms: int) -> CleanableRange:
    """Kafka's LogCleanerManager.cleanableOffsets plus the dirty ratio."""
    config = partition_log.config
    uncleanable = partition_log.active_segment.base_offset
    # Never past the first open transaction: whether its records stay is not decided yet
    # (Kafka's firstUnstableOffset), snapped to the start of the segment holding it.
    lso = partition_log.last_stable_offset
    if lso < uncleanable:
        uncleanable = partition_log.segments[partition_log._segment_index(lso)].base_offset
    first_dirty = min(first_dirty_offset(partition_log), uncleanable)
    if config.min_compaction_lag_ms > 0:
        for segment, end in _segments_with_ends(partition_log):
            if end > first_dirty and segment_largest_timestamp(segment) > now_ms - config.min_compaction_lag_ms:
                uncleanable = min(uncleanable, segment.base_offset)
                break
    first_dirty = min(first_dirty, uncleanable)
    clean_bytes = dirty_bytes = 0
    for segment, end in _segments_with_ends(partition_log):
        if end <= first_dirty:
            clean_bytes += segment.size
        elif segment.base_offset < uncleanable:
            dirty_bytes += segment.size
    return CleanableRange(first_dirty, uncleanable, dirty_bytes, clean_bytes)


def _must_clean_for_max_lag(partition_log: PartitionLog, cleanable: CleanableRange, now_ms: int) -> bool:
    """max.compaction.lag.ms: the first dirty segment's first batch is too old to wait."""
    max_lag = partition_log.config.max_compaction_lag_ms
    for segment, end in _segments_with_ends(partition_log):
        if end > cleanable.first_dirty_offset and segment.base_offset < cleanable.first_uncleanable_offset:
            first_timestamp = segment.rolling_based_timestamp
            if first_timestamp is None or first_timestamp < 0:
                first_timestamp = segment_largest_timestamp(segment)
            return now_ms - first_timestamp > max_lag
    return False


def _live_batches(segment: LogSegment) -> Iterable[tuple[int, rec.BatchHeader]]:
    return segment.batches_from(segment.base_offset)


class AbortedBatches:
    """Which transactional batches belong to aborted transactions (from the .txnindex files),
    so the cleaner drops them and never lets them shadow a committed record, as Kafka's does."""

    def __init__(self, partition_log: PartitionLog, end: int):
        self.by_producer: dict[int, list[tuple[int, int]]] = {}
        for entry in partition_log.collect_aborted(partition_log.log_start_offset, end):
            self.by_producer.setdefault(entry.producer_id, []).append((entry.first_offset, entry.last_offset))

    def __contains__(self, header: rec.BatchHeader) -> bool:
        if not header.is_transactional or header.is_control:
            return False
        return any(first <= header.base_offset <= last for first, last in self.by_producer.get(header.producer_id, ()))


def build_offset_map(
    segments: PartitionLog | SegmentsWithEnds, start: int, end: int, aborted: AbortedBatches | None = None,
) -> dict[bytes, int]:
    """key -> offset of its latest record among offsets [start, end), aborted records left out."""
    if isinstance(segments, PartitionLog):
        segments = _segments_with_ends(segments)
    offset_map: dict[bytes, int] = {}
    for segment, segment_end in segments:
        if segment_end <= start or segment.base_offset >= end:
            continue
        for pos, header in _live_batches(segment):
            if header.is_control or header.next_offset <= start or header.base_offset >= end:
                continue
            if aborted is not None and header in aborted:
                continue
            for record in rec.decode_records(segment.pread(pos, header.size)):
                if record.key is not None and start <= record.offset < end:
                    offset_map[record.key] = record.offset
    return offset_map


def group_segments_by_size(segments: list[LogSegment], max_size: int) -> list[list[LogSegment]]:
    """Consecutive segments merged while their total size fits segment.bytes and their offsets
    fit a segment's int32 relative offsets (Kafka's groupSegmentsBySize)."""
    groups: list[list[LogSegment]] = []
    for segment in segments:
        if groups:
            group = groups[-1]
            size = sum(s.size for s in group) + segment.size
            span = max(segment.next_offset, segment.base_offset) - group[0].base_offset
            if size <= max_size and span <= rec.INT32_MAX:
                group.append(segment)
                continue
        groups.append([segment])
    return groups


@dataclass
class CleaningPass:
    """One partition's cleaning between `plan` and `finish`."""

    partition_log: PartitionLog
    cleanable: CleanableRange
    now_ms: int
    segments: SegmentsWithEnds  # the log's segments when planned
    aborted: AbortedBatches
    segment_bytes: int
    delete_retention_ms: int
    stats: CleanerStats = field(default_factory=CleanerStats)
    written: list[tuple[LogSegment, list[LogSegment], Path]] = field(default_factory=list)
    deadline: int = NO_DEADLINE


class LogCleaner:
    """Compacts partitions whose cleanup.policy includes compact. One object per broker; it
    remembers, per partition, when tombstones it kept become removable."""

    def __init__(self) -> None:
        self._tombstone_deadlines: dict[str, int] = {}
        # Partitions a planned pass is cleaning (until `release`): no second pass may start
        # there meanwhile, since both would write the same `.cleaned` files.
        self._busy: set[str] = set()

    def needs_cleaning(self, partition_log: PartitionLog, now_ms: int) -> CleanableRange | None:
        config = partition_log.config
        if not config.compact or str(partition_log.directory) in self._busy:
            return None
        cleanable = cleanable_range(partition_log, now_ms)
        deadline = self._tombstone_deadlines.get(str(partition_log.directory), NO_DEADLINE)
        if cleanable.dirty_bytes == 0 and now_ms <= deadline:
            return None
        if (
            (cleanable.dirty_bytes and cleanable.dirty_ratio >= config.min_cleanable_dirty_ratio)
            or (cleanable.dirty_bytes and _must_clean_for_max_lag(partition_log, cleanable, now_ms))
            or now_ms > deadline
        ):
            return cleanable
        return None

    def clean_logs(self, logs: Iterable[PartitionLog], now_ms: int) -> dict[str, CleanerStats]:
        """One cleaner pass, inline: every partition that needs cleaning, cleaned once."""
        done = {}
        for partition_log in logs:
            cleanable = self.needs_cleaning(partition_log, now_ms)
            if cleanable is not None:
                done[str(partition_log.directory)] = self.clean(partition_log, cleanable, now_ms)
        return done

    def clean(self, partition_log: PartitionLog, cleanable: CleanableRange, now_ms: int) -> CleanerStats:
        """Plan, write and finish one partition's cleaning in a row."""
        cleaning = self._plan(partition_log, cleanable, now_ms)
        self.write(cleaning)
        if self.finish(cleaning):
            self.checkpoint(cleaning)
        return cleaning.stats

    def plan(self, partition_log: PartitionLog, now_ms: int) -> CleaningPass | None:
        """On the loop: what this partition's cleaning will do, or None when it needs none (or
        a pass is already cleaning it). Call `release` when the pass is over."""
        cleanable = self.needs_cleaning(partition_log, now_ms)
        if cleanable is None:
            return None
        self._busy.add(str(partition_log.directory))
        return self._plan(partition_log, cleanable, now_ms)

    def release(self, cleaning: CleaningPass) -> None:
        """The planned pass is over (finished, dropped or failed): the partition may be cleaned again."""
        self._busy.discard(str(cleaning.partition_log.directory))

    @staticmethod
    def _plan(partition_log: PartitionLog, cleanable: CleanableRange, now_ms: int) -> CleaningPass:
        config = partition_log.config
        return CleaningPass(
            partition_log, cleanable, now_ms, _segments_with_ends(partition_log),
            AbortedBatches(partition_log, cleanable.first_uncleanable_offset),
            config.segment_bytes, config.delete_retention_ms,
        )

    def write(self, cleaning: CleaningPass) -> None:
        """In a worker thread: the cleaned segments, written and fsynced beside the old ones.
        On any error the cleaned files written so far are removed and the error raised."""
        cleanable, stats = cleaning.cleanable, cleaning.stats
        offset_map = build_offset_map(
            cleaning.segments, cleanable.first_dirty_offset, cleanable.first_uncleanable_offset, cleaning.aborted
        )
        segments = [s for s, _ in cleaning.segments]
        to_clean = [s for s in segments if s.base_offset < cleanable.first_uncleanable_offset]
        try:
            for group in group_segments_by_size(to_clean, cleaning.segment_bytes):
                cleaned = new_cleaned_segment(cleaning.partition_log, group[0].base_offset)
                try:
                    for segment in group:
                        kept_tombstones = self._clean_segment(
                            segment, cleaned, offset_map, cleaning.now_ms, cleaning.delete_retention_ms, stats,
                            cleaning.aborted,
                        )
                        for entry in segment.txn_index.entries:  # markers stay, so their index entries too
                            cleaned.txn_index.append(entry)
                        if kept_tombstones:
                            cleaning.deadline = min(
                                cleaning.deadline, segment_largest_timestamp(segment) + cleaning.delete_retention_ms
                            )
                    following = segments[segments.index(group[-1]) + 1]
                    end_file = prepare_swap(cleaning.partition_log, cleaned, following.base_offset)
                except BaseException:
                    cleaned.delete()
                    raise
                cleaning.written.append((cleaned, group, end_file))
                stats.segments_read += len(group)
                stats.segments_written += 1
                stats.bytes_written += cleaned.size
        except BaseException:
            self._discard(cleaning.written)
            raise

    def finish(self, cleaning: CleaningPass) -> bool:
        """On the loop: swap the cleaned segments in. False when the log changed under the pass
        (its cleaned copies are dropped; the next pass starts over)."""
        partition_log = cleaning.partition_log
        for i, (cleaned, group, end_file) in enumerate(cleaning.written):
            if not swap_in(partition_log, cleaned, group, end_file):
                log.info("%s: the log changed while it was cleaned; trying again next pass", partition_log.directory)
                self._discard(cleaning.written[i:])
                return False
        self._tombstone_deadlines[str(partition_log.directory)] = cleaning.deadline
        stats = cleaning.stats
        log.info(
            "%s: cleaned offsets below %d: %d segments (%d bytes) into %d (%d bytes), %d of %d records removed, "
            "%d tombstones removed",
            partition_log.directory, cleaning.cleanable.first_uncleanable_offset, stats.segments_read,
            stats.bytes_read, stats.segments_written, stats.bytes_written, stats.records_removed, stats.records_read,
            stats.tombstones_removed,
        )
        return True

    @staticmethod
    def checkpoint(cleaning: CleaningPass) -> None:
        """After finish (a worker thread will do): where the next pass's dirty part starts."""
        write_checkpoint(
            cleaning.partition_log.directory / CLEANER_CHECKPOINT_FILE, cleaning.cleanable.first_uncleanable_offset
        )

    @staticmethod
    def _discard(written: list[tuple[LogSegment, list[LogSegment], Path]]) -> None:
        for cleaned, _, end_file in written:
            cleaned.delete()
            end_file.unlink(missing_ok=True)

    @staticmethod
    def _clean_segment(
        segment: LogSegment, cleaned: LogSegment, offset_map: dict[bytes, int], now_ms: int,
        delete_retention_ms: int, stats: CleanerStats, aborted: AbortedBatches,
    ) -> bool:
        """Copy the records of `segment` worth keeping into `cleaned`; True if tombstones stayed."""
        remove_tombstones = now_ms - segment_largest_timestamp(segment) > delete_retention_ms
        kept_tombstones = False
        for pos, header in list(_live_batches(segment)):
            data = segment.pread(pos, header.size)
            stats.bytes_read += header.size
            if header.is_control:
                cleaned.append(data, [(0, header)])
                continue
            if header in aborted:
                stats.records_read += header.record_count
                stats.records_removed += header.record_count
                continue
            records = rec.decode_records(data)
            kept = []
            for record in records:
                latest = offset_map.get(record.key) if record.key is not None else None
                if record.key is None or (latest is not None and record.offset < latest):
                    continue
                if record.value is None:
                    if remove_tombstones:
                        stats.tombstones_removed += 1
                        continue
                    kept_tombstones = True
                kept.append(record)
            stats.records_read += len(records)
            stats.records_removed += len(records) - len(kept)
            if len(kept) == len(records):
                cleaned.append(data, [(0, header)])
            elif kept:
                _append_batch(cleaned, _rebuild_batch(header, kept))
        return kept_tombstones


def _rebuild_batch(header: rec.BatchHeader, kept: list[rec.Record]) -> bytes:
    """The kept records in a batch that looks like the original: same base offset and offset
    range (so producer sequences still line up), same compression and producer fields."""
    return rec.encode_batch(
        kept,
        base_offset=header.base_offset,
        last_offset_delta=header.last_offset_delta,
        compression=header.compression,
        timestamp_type=header.timestamp_type,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        transactional=header.is_transactional,
        partition_leader_epoch=header.partition_leader_epoch,
    )


def _append_batch(segment: LogSegment, data: bytes) -> None:
    segment.append(data, [(0, rec.parse_header(data))])
