"""LogLoader: how a partition's directory becomes a PartitionLog at open (Kafka's LogLoader).

Also the names of the files a partition directory holds besides its segments (checkpoints, the
clean-shutdown marker, the suffixes of cleaning and swapping) and how checkpoints are read and
written: the loader is the first to read them, and everything else that does imports them from
here (through trafka.storage.log).

Recovery: a segment past the recovery point is rescanned batch by batch (after an unclean
shutdown: all of them past the last fsynced offset); a segment whose index is missing or corrupt
is rebuilt; what follows a truncated segment is deleted; the producer state is rebuilt from the
newest snapshot plus the batches after it. See docs/storage.md.

The functions take the PartitionLog being opened (`log`) and fill it in; this module does not
import trafka.storage.log, which imports it.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from trafka.storage.files import atomic_write
from trafka.storage.index import CorruptIndex
from trafka.storage.segment import (
    LOG_SUFFIX, LogSegment, TailCorrupt, offset_filename, parse_offset_filename, segment_bases,
)
from trafka.wire import records as rec

logger = logging.getLogger("trafka.storage")

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
LOG_START_OFFSET_FILE = "log-start-offset"
RECOVERY_POINT_FILE = "recovery-point"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
DELETED_SUFFIX = ".deleted"
# Beside a .swap segment: the end of the offset range it replaces. The cleaned copy may end
# earlier than the segments it replaces (their last records were compacted away), so its own
# next offset cannot tell recovery which live segments the swap covers.
SWAP_END_SUFFIX = ".swapend"


@dataclass(frozen=True)
class CleanState:
    """What a clean close leaves for the next open: everything below recovery_point is
    fsynced, and the log start offset."""

    recovery_point: int
    log_start_offset: int


def read_checkpoint(path: Path) -> int | None:
    """The offset a checkpoint file holds (log start, recovery point, cleaner); None when it is
    missing or unreadable."""
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def write_checkpoint(path: Path, value: int) -> None:
    atomic_write(path, f"{value}\n")


def load(log, *, fresh: bool = False) -> None:
    """Open a partition's directory into `log`: leftovers of an interrupted cleaning removed,
    interrupted swaps completed, segments recovered past the recovery point (all of them
    after an unclean shutdown), the log start offset read, the producer state rebuilt.
    `fresh`: the caller knows the directory does not exist (a partition being created, or one
    never written), so there is nothing to list."""
    try:
        names = [] if fresh else os.listdir(log.directory)  # the one listing the whole load works from
    except FileNotFoundError:
        names = []
    if not names:
        # A fresh partition (or one never written): one lazy segment at offset 0 whose
        # files appear with the first append. Nothing to recover or replay.
        log.segments.append(log._new_segment(0, log.clock.time_ms(), lazy=True))
        log._bases = [0]
        log.log_start_offset = 0
        return
    clean = CLEAN_SHUTDOWN_FILE in names or log._clean_state is not None
    if any(n.endswith((CLEANED_SUFFIX, DELETED_SUFFIX, ".tmp")) for n in names):
        _remove_temporary_files(log.directory)
        names = os.listdir(log.directory)
    if any(n.endswith((SWAP_SUFFIX, SWAP_END_SUFFIX)) for n in names):
        _complete_swaps(log)
        names = os.listdir(log.directory)
    recovery_point = (read_checkpoint(log.directory / RECOVERY_POINT_FILE) or 0) if not clean else None
    bases = segment_bases(names)
    if not clean and bases:
        logger.info("%s: no clean shutdown marker, recovering segments from offset %d", log.directory, recovery_point)
    now = log.clock.time_ms()
    for i, base in enumerate(bases):
        segment = log._new_segment(base, now)
        next_base = bases[i + 1] if i + 1 < len(bases) else None
        if recovery_point is not None and (next_base is None or next_base > recovery_point):
            truncated = segment.recover()
        else:
            truncated = _load_segment(segment)
        log.segments.append(segment)
        if truncated and next_base is not None:
            later = [log._new_segment(b, now) for b in bases[i + 1 :]]
            logger.warning("%s: deleting %d segments after the truncated segment %d", log.directory, len(later), base)
            for s in later:
                s.delete()
            break
    if not log.segments:
        base = read_checkpoint(log.directory / LOG_START_OFFSET_FILE) or 0
        log.segments.append(log._new_segment(base, now))
    log._bases = [s.base_offset for s in log.segments]
    if log._clean_state is not None:
        checkpoint = log._clean_state.log_start_offset
    else:
        checkpoint = read_checkpoint(log.directory / LOG_START_OFFSET_FILE) or 0
    log.log_start_offset = min(max(checkpoint, log.segments[0].base_offset), log.log_end_offset)
    _load_producer_state(log, names)
    if CLEAN_SHUTDOWN_FILE in names:
        (log.directory / CLEAN_SHUTDOWN_FILE).unlink(missing_ok=True)
    log._clean_state = None  # a crash from now on counts as unclean



def _load_segment(segment: LogSegment) -> int:
    try:
        segment.load()
        return 0
    except FileNotFoundError as exc:
        logger.warning("%s: missing index (%s), rebuilding", segment.log_path, exc.filename)
    except (CorruptIndex, TailCorrupt) as exc:
        logger.warning("%s: %s, recovering the segment", segment.log_path, exc)
    return segment.recover()

def _remove_temporary_files(directory: Path) -> None:
    for path in directory.iterdir():
        if path.name.endswith((CLEANED_SUFFIX, DELETED_SUFFIX, ".tmp")):
            logger.info("removing leftover %s", path)
            path.unlink(missing_ok=True)

def _complete_swaps(log) -> None:
    """Finish a compaction swap interrupted by a crash: the .swap segment replaces the
    live segments whose base offsets fall inside the offset range it was written for."""
    for swap_log in sorted(log.directory.glob(f"*{LOG_SUFFIX}{SWAP_SUFFIX}")):
        base = parse_offset_filename(swap_log.name, LOG_SUFFIX + SWAP_SUFFIX)
        if base is None:
            continue
        segment = log._new_segment(base, log.clock.time_ms(), SWAP_SUFFIX)
        segment.recover()
        end_file = log.directory / (offset_filename(base, SWAP_END_SUFFIX))
        end = max(read_checkpoint(end_file) or 0, segment.next_offset)
        for live_base in segment_bases(os.listdir(log.directory)):
            if base <= live_base < end:
                log._new_segment(live_base, 0).delete()
        segment.change_suffix("")
        segment.close()
        logger.info("completed the interrupted swap of segment %d in %s", base, log.directory)
    for leftover in log.directory.glob(f"*{SWAP_END_SUFFIX}"):
        leftover.unlink()

def _load_producer_state(log, names: list[str] | None = None) -> None:
    state = log.producer_state
    if state.delete_snapshots_above(log.log_end_offset, names):
        names = None  # list again
    snapshot = state.load_latest_snapshot(names)
    start = max(snapshot if snapshot is not None else 0, log.segments[0].base_offset)
    replayed = 0
    for segment in log.segments:
        if segment.next_offset <= start:
            continue
        batches = []
        for pos, header in segment.batches_from(start):
            control = None
            if header.is_control:
                try:
                    control = rec.control_type(segment.pread(pos, header.size))
                except rec.CorruptRecordError as exc:
                    logger.warning("%s: skipping unreadable control batch at %d: %s", log.directory, header.base_offset, exc)
                    continue
            batches.append((header, control))
        replayed += len(batches)
        for done in state.rebuild(snapshot, batches):
            log.index_aborted(segment, done)
        snapshot = snapshot if snapshot is not None else -1  # clear the state once only
    state.on_log_start_offset_incremented(log.log_start_offset)
    if replayed or snapshot is not None:
        logger.debug("%s: producer state from snapshot %s plus %d batches", log.directory, snapshot, replayed)

