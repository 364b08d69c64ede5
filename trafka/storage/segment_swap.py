"""Swapping a cleaned segment in for the segments it replaces (Kafka's LocalLog.replaceSegments).

The cleaner (trafka/storage/cleaner.py) writes a `.cleaned` segment from `new_cleaned_segment`;
`prepare_swap` (slow, in a worker thread: fsync, the end-of-range file) and `swap_in` (fast, on
the loop: renames `.cleaned` -> `.swap`, old -> `.deleted`, removes them, `.swap` -> live) put
it in place, so a crash at any step leaves either the old segments or the new one, and the
loader (log_loader._complete_swaps) finishes what a crash interrupted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from trafka.storage.log import PartitionLog
from trafka.storage.log_loader import CLEANED_SUFFIX, DELETED_SUFFIX, SWAP_END_SUFFIX, SWAP_SUFFIX, write_checkpoint, read_checkpoint
from trafka.storage.segment import LogSegment, offset_filename


def new_cleaned_segment(log: PartitionLog, base_offset: int) -> LogSegment:
    """An empty `.cleaned` segment for the cleaner to fill with `append`."""
    log.check_open()
    segment = log._new_segment(base_offset, log.clock.time_ms(), CLEANED_SUFFIX)
    if segment.size:
        segment.delete()
        segment = log._new_segment(base_offset, log.clock.time_ms(), CLEANED_SUFFIX)
    return segment

def replace_segments(log: PartitionLog, cleaned: LogSegment, old: Sequence[LogSegment]) -> None:
    """Swap a cleaned segment in for `old`, consecutive segments starting at the cleaned
    segment's base offset (Kafka's .cleaned -> .swap -> live sequence, so a crash at any
    step leaves either the old segments or the new one on open)."""
    log.check_open()
    if log.active_segment in old:
        raise ValueError("the active segment is never cleaned")
    following = log.segments[log.segments.index(old[-1]) + 1]
    end_file = prepare_swap(log, cleaned, following.base_offset)
    if not swap_in(log, cleaned, old, end_file):
        raise ValueError(f"{old} are no longer this log's segments")

def prepare_swap(log: PartitionLog, cleaned: LogSegment, following_base: int) -> Path:
    """The slow half of replace_segments, safe in a worker thread: the cleaned segment
    fsynced, and the file naming where the segments it replaces end."""
    end_file = log.directory / offset_filename(cleaned.base_offset, SWAP_END_SUFFIX)
    cleaned.on_become_inactive()
    cleaned.flush()
    write_checkpoint(end_file, following_base)
    return end_file

def swap_in(log: PartitionLog, cleaned: LogSegment, old: Sequence[LogSegment], end_file: Path) -> bool:
    """The fast half, on the loop: renames and the segment list. False, and nothing done,
    when `old` is no longer a run of this log's segments followed by the one `end_file`
    names (retention or DeleteTopics got there while the cleaned copy was written)."""
    if log.closed or not old or any(s not in log.segments for s in old):
        return False
    after = log.segments.index(old[-1]) + 1
    if after >= len(log.segments) or log.segments[after].base_offset != read_checkpoint(end_file):
        return False
    cleaned.change_suffix(SWAP_SUFFIX)
    for segment in old:
        segment.change_suffix(DELETED_SUFFIX)
    for segment in old:
        log.segments.remove(segment)
        segment.delete()
    cleaned.change_suffix("")
    end_file.unlink()
    log.segments.append(cleaned)
    log.segments.sort(key=lambda s: s.base_offset)
    log._bases = [s.base_offset for s in log.segments]
    return True
