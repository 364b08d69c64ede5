"""Reading a partition's segments, as Kafka's LocalLog.read: byte ranges for Fetch (sent by
sendfile), aborted transactions from the transaction indexes, offsets by timestamp, and the
coordinators' replay of an internal topic. Functions of the segment list; `PartitionLog`
checks the offsets against its log start offset and high watermark and calls them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generator, Iterator, TypeVar

from trafka.storage.segment import FileSlice, LogSegment
from trafka.storage.txn_index import AbortedTxn


@dataclass(frozen=True)
class ReadInfo:
    slices: list[FileSlice]  # in offset order, for pread or sendfile; see PartitionLog.read
    high_watermark: int
    log_start_offset: int

    @property
    def size(self) -> int:
        return sum(s.size for s in self.slices)

    def to_bytes(self) -> bytes:
        return b"".join(s.read() for s in self.slices)



@dataclass(frozen=True)
class TimestampAndOffset:
    timestamp: int
    offset: int



T = TypeVar("T")
_REPLAY_READ_BYTES = 1 << 20


def replay_log(partition_log, entries: Callable[[bytes, int], Generator[T, None, int]]) -> Iterator[T]:
    """What `entries(data, offset)` yields over the partition's whole batches, from its log start
    offset to its high watermark, read a megabyte at a time; `entries` returns the offset after
    the last batch it read (how the coordinators replay their internal topics at start-up)."""
    offset = partition_log.log_start_offset
    while offset < partition_log.high_watermark:
        data = partition_log.read(offset, _REPLAY_READ_BYTES).to_bytes()
        if not data:
            break
        offset = yield from entries(data, offset)


def read_segments(segments: list[LogSegment], fetch_offset: int, max_bytes: int, *, min_one_batch: bool = True,
                  partial_tail: bool = False, max_offset: int | None = None) -> list[FileSlice]:
    """Batches from the one containing fetch_offset (segments start with the segment holding
    it), up to max_bytes, never reaching max_offset (exclusive) when given: the last stable
    offset of a read_committed fetch. With min_one_batch (Kafka's default for the first
    partition of a fetch) one whole batch comes back even when it is larger than max_bytes.

    With partial_tail (Fetch) the result is a byte range like Kafka's, which may end inside a
    batch (clients drop that trailing part); its cost does not depend on how many batches it
    holds. Without it, whole batches only (internal readers that parse them)."""
    slices: list[FileSlice] = []
    remaining, start = max_bytes, fetch_offset
    for segment in segments:
        if segment.next_offset <= start:
            continue  # no batch here reaches start (an empty or compacted-away range)
        if max_offset is not None and segment.base_offset >= max_offset:
            break
        end = segment.size
        found = segment.read(
            start, remaining, min_one_batch=min_one_batch and not slices, partial_tail=partial_tail,
            max_offset=max_offset,
        )
        if found is None:
            if next(segment.batches_from(start), None) is not None:
                break  # a batch here reaches start but does not fit, or max_offset stops it
            # Nothing here reaches start (the cleaner emptied this segment, or compacted
            # away its last offsets): go on with the next segment, as Kafka's LocalLog.read.
            continue
        slices.append(found)
        remaining -= found.size
        if remaining <= 0 or found.position + found.size < end:
            break
        start = segment.next_offset
    return slices


def collect_aborted(segments: list[LogSegment], fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
    """Aborted transactions overlapping [fetch_offset, upper_bound), from the transaction
    indexes of the segments holding fetch_offset and after (markers follow their data)."""
    found: list[AbortedTxn] = []
    for segment in segments:
        # No early stop: a marker can sit past upper_bound when an older transaction is open.
        found.extend(segment.txn_index.collect_aborted(fetch_offset, upper_bound))
    return found


def offset_for_timestamp(segments: list[LogSegment], timestamp: int, log_start_offset: int) -> TimestampAndOffset | None:
    """The first record (at or after the log start offset) with a timestamp >= timestamp, or
    None when there is none (ListOffsets then answers offset -1)."""
    for segment in segments:
        if segment.next_offset <= log_start_offset or segment.max_timestamp_so_far < timestamp:
            continue
        found = segment.find_offset_by_timestamp(timestamp, log_start_offset)
        if found is not None:
            return TimestampAndOffset(*found)
    return None


def max_timestamp(segments: list[LogSegment]) -> TimestampAndOffset | None:
    """The record with the largest timestamp (ListOffsets -3), first one on ties."""
    best = None
    for segment in segments:
        if segment.offset_of_max_timestamp_so_far >= 0 and (
            best is None or segment.max_timestamp_so_far > best.max_timestamp_so_far
        ):
            best = segment
    if best is None:
        return None
    found = best.max_timestamp_record()
    return TimestampAndOffset(*found) if found else None
