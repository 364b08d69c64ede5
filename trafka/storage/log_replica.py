"""A follower's writes to its replica of a partition (Kafka's UnifiedLog.appendAsFollower and
truncateTo): the leader's batches go in unchanged, and a log that diverged from the leader's
is cut back to where they agree.

The leader assigns offsets and stamps each batch with its leader epoch (PartitionLog.append);
a follower keeps both, so every replica holds byte-for-byte the same batches at the same
offsets, and OffsetForLeaderEpoch answers the same on each.
"""

from __future__ import annotations

import logging

from trafka.storage.errors import CorruptRecord, StorageWriteFailed
from trafka.storage.log_loader import LOG_START_OFFSET_FILE, RECOVERY_POINT_FILE, _load_producer_state, read_checkpoint, write_checkpoint
from trafka.storage.producer_state import has_producer_state
from trafka.wire import records as rec

log = logging.getLogger("trafka.storage")


class OffsetMismatch(CorruptRecord):
    """The leader's batches do not start at this replica's log end offset."""


def append_as_follower(partition_log, records) -> int:
    """Append batches read from the leader, offsets and leader epochs as they are; returns the
    number of records appended. Raises CorruptRecord (a bad CRC, a torn batch), OffsetMismatch
    (they do not continue this log) and StorageWriteFailed; nothing is written when it raises."""
    partition_log.check_open()
    data = bytes(records)
    try:
        batches = list(rec.iter_batches(data))
    except rec.CorruptRecordError as exc:
        raise CorruptRecord(str(exc)) from None
    if not batches:
        return 0
    expected = partition_log.log_end_offset
    for _, header in batches:
        if header.base_offset != expected:
            raise OffsetMismatch(f"{partition_log.directory.name}: the leader's batch starts at offset "
                                 f"{header.base_offset}, this replica ends at {expected}")
        expected = header.next_offset
    now = partition_log.clock.time_ms()
    max_timestamp = max(h.max_timestamp for _, h in batches)
    try:
        segment = partition_log._maybe_roll(len(data), max_timestamp, expected - 1, now)
    except OSError as exc:
        raise StorageWriteFailed(f"cannot roll a new segment in {partition_log.directory}: {exc.strerror or exc}",
                                 exc.errno) from None
    segment.repair_torn_tail()
    segment.append(data, batches)  # cut back whole on StorageWriteFailed
    state = partition_log.producer_state
    count = 0
    for pos, header in batches:
        count += header.record_count
        if header.is_control:
            control = rec.control_type(data, pos)
            done = state.complete_txn(header.producer_id, header.producer_epoch, header.base_offset,
                                      control == rec.CONTROL_COMMIT)
            if done is not None:
                partition_log.index_aborted(segment, done)
        elif has_producer_state(header):
            state.update_from_log(header)
    partition_log._unflushed_messages += count
    try:
        partition_log.flush_if_due()
    except OSError as exc:
        raise StorageWriteFailed(f"cannot flush {partition_log.directory}: {exc.strerror or exc}", exc.errno) from None
    return count


def truncate_to(partition_log, offset: int) -> int:
    """Remove every batch that ends at or after `offset`, as Kafka's truncateTo: a batch holding
    `offset` goes whole, so the log may end below `offset`. Below the log start the log is
    emptied and starts again at `offset`. Returns the new log end offset."""
    partition_log.check_open()
    if offset >= partition_log.log_end_offset:
        return partition_log.log_end_offset
    if offset < partition_log.log_start_offset:
        return truncate_fully_and_start_at(partition_log, offset)
    segments = partition_log.segments
    keep = [s for s in segments if s.base_offset < offset] or segments[:1]
    doomed = segments[len(keep):]
    segment = keep[-1]
    position = segment.position_of(offset, holding=True)
    for gone in doomed:
        gone.delete()
    partition_log.segments[:] = keep
    partition_log._bases = [s.base_offset for s in keep]
    if position < segment.size:
        segment.truncate_at(position)
    _rebuild_producer_state(partition_log)
    end = partition_log.log_end_offset
    write_checkpoint(partition_log.directory / RECOVERY_POINT_FILE, min(end, _recovery_point(partition_log)))
    log.info("%s: truncated to offset %d (asked %d)", partition_log.directory, end, offset)
    return end


def truncate_fully_and_start_at(partition_log, offset: int) -> int:
    """Empty the log and start it again at `offset` (Kafka's truncateFullyAndStartAt): a
    follower whose log ends below its leader's log start has nothing the leader still keeps."""
    partition_log.check_open()
    now = partition_log.clock.time_ms()
    for segment in partition_log.segments:
        segment.delete()
    partition_log.directory.mkdir(parents=True, exist_ok=True)  # a never-written replica has none yet
    fresh = partition_log._new_segment(offset, now)
    partition_log.segments[:] = [fresh]
    partition_log._bases = [offset]
    partition_log.log_start_offset = offset
    write_checkpoint(partition_log.directory / LOG_START_OFFSET_FILE, offset)
    _rebuild_producer_state(partition_log)
    log.info("%s: emptied, starting again at offset %d", partition_log.directory, offset)
    return offset


def follow_log_start(partition_log, leader_log_start: int) -> int:
    """A follower's log start moves up to its leader's (DeleteRecords, retention), never past
    its own high watermark, as Kafka's maybeIncrementLogStartOffset after each fetch. Returns
    the log start offset."""
    offset = min(leader_log_start, partition_log.high_watermark)
    if offset > partition_log.log_start_offset:
        partition_log.delete_records_before(offset)
    return partition_log.log_start_offset


def _rebuild_producer_state(partition_log) -> None:
    """Snapshots past the new end go; the state is the newest remaining snapshot plus a replay."""
    state = partition_log.producer_state
    state.producers.clear()
    state.open_txns.clear()
    _load_producer_state(partition_log)


def _recovery_point(partition_log) -> int:
    return read_checkpoint(partition_log.directory / RECOVERY_POINT_FILE) or 0


UNDEFINED = -1


def last_leader_epoch(partition_log) -> int | None:
    """The leader epoch of the log's last batch, or None for an empty log."""
    for segment in reversed(partition_log.segments):
        last = None
        for _, header in segment.batches_from(segment.base_offset):
            last = header.partition_leader_epoch
        if last is not None:
            return last
    return None


def epoch_at(partition_log, offset: int) -> int:
    """The leader epoch of the batch holding `offset` (Kafka's leader epoch cache's
    epochForOffset), or -1 when no batch holds it (an empty log, an offset at its end)."""
    if not partition_log.log_start_offset <= offset < partition_log.log_end_offset:
        return UNDEFINED
    for segment in partition_log.segments:
        if segment.next_offset <= offset:
            continue
        for _, header in segment.batches_from(max(segment.base_offset, offset)):
            return header.partition_leader_epoch  # the first batch ending at or after it
    return UNDEFINED


def epoch_end_offset(partition_log, epoch: int, current_epoch: int) -> tuple[int, int]:
    """Kafka's leader-epoch-cache answer to OffsetForLeaderEpoch (LeaderEpochFileCache.endOffsetFor):
    for the current epoch, the log end offset; for an older one, the largest epoch at or below
    it that has batches and the first offset of the next larger epoch (where the asked epoch's
    writes ended); for one older than every epoch the log still has batches of (they went with
    retention or DeleteRecords, and Kafka's cache was cut at the log start), that epoch itself
    and the log start offset, where the first epoch the log knows begins (the log end when no
    batch is left); (-1, -1) above the current epoch or for -1. The epochs are read from the
    batch headers."""
    if epoch == current_epoch:
        return current_epoch, partition_log.log_end_offset
    if epoch > current_epoch or epoch < 0:
        return UNDEFINED, UNDEFINED
    floor = UNDEFINED
    for segment in partition_log.segments:
        for _, header in segment.batches_from(max(segment.base_offset, partition_log.log_start_offset)):
            if header.partition_leader_epoch > epoch:
                if floor == UNDEFINED:
                    return epoch, partition_log.log_start_offset
                return floor, header.base_offset
            floor = header.partition_leader_epoch
    return (floor, partition_log.log_end_offset) if floor != UNDEFINED else (epoch, partition_log.log_end_offset)
