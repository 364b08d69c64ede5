"""Retention as predicates over the oldest segments (Kafka's UnifiedLog.deleteOldSegments).

Each predicate answers "may this segment go?" for the oldest remaining segment, given the one
after it (None for the active segment). `PartitionLog.delete_old_segments` deletes from the
oldest while the predicate holds, so retention never leaves a hole in the middle of a log.
Kafka's order is kept: segments wholly below the log start offset (DeleteRecords) first, then
size (retention.bytes), then age (retention.ms); each pass sees what the previous one left.
"""

from __future__ import annotations

from typing import Callable

from trafka.storage.log import PartitionLog
from trafka.storage.segment import LogSegment

Predicate = Callable[[LogSegment, "LogSegment | None"], bool]


def segment_largest_timestamp(segment: LogSegment) -> int:
    """The newest record's timestamp; for a segment without timestamps, when it was opened
    (Kafka falls back to the file's mtime)."""
    if segment.max_timestamp_so_far >= 0:
        return segment.max_timestamp_so_far
    return segment.created_ms


def retention_ms_breached(retention_ms: int, now_ms: int) -> Predicate:
    """The segment's newest record is older than retention.ms. Negative retention.ms: never."""

    def predicate(segment: LogSegment, next_segment: LogSegment | None) -> bool:
        return retention_ms >= 0 and now_ms - segment_largest_timestamp(segment) > retention_ms

    return predicate


def retention_bytes_breached(retention_bytes: int, log_size: int) -> Predicate:
    """Delete oldest segments while what remains stays at or above retention.bytes (Kafka's
    rule: a segment goes only if the partition is still at least retention.bytes without it)."""
    excess = log_size - retention_bytes

    def predicate(segment: LogSegment, next_segment: LogSegment | None) -> bool:
        nonlocal excess
        if retention_bytes < 0 or excess - segment.size < 0:
            return False
        excess -= segment.size
        return True

    return predicate


def below_log_start_offset(log_start_offset: int) -> Predicate:
    """Every offset of the segment is below the log start offset (moved by DeleteRecords)."""

    def predicate(segment: LogSegment, next_segment: LogSegment | None) -> bool:
        return next_segment is not None and next_segment.base_offset <= log_start_offset

    return predicate


def apply_retention(partition_log: PartitionLog, now_ms: int) -> int:
    """One retention pass over one partition; returns the number of segments deleted.

    Time and size retention apply only with cleanup.policy containing delete; segments below
    the log start offset go under any policy.
    """
    config = partition_log.config
    deleted = partition_log.delete_old_segments(
        below_log_start_offset(partition_log.log_start_offset),
        reason=f"below log start offset {partition_log.log_start_offset}",
    )
    if config.delete:
        deleted += partition_log.delete_old_segments(
            retention_bytes_breached(config.retention_bytes, partition_log.size_in_bytes),
            reason=f"retention.bytes {config.retention_bytes} breached",
        )
        deleted += partition_log.delete_old_segments(
            retention_ms_breached(config.retention_ms, now_ms),
            reason=f"retention.ms {config.retention_ms} breached",
        )
    return deleted
