"""LogSegment: one `.log` file of whole batches plus its `.index` and `.timeindex`.

Files are named by the segment's base offset zero-padded to 20 digits, as in Kafka. Appends go
through os.write on an unbuffered descriptor: once `append` returns, the bytes belong to the OS,
so they survive a SIGKILL of this process (not a power cut; that is what flush() is for).
"""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from trafka.storage.errors import LogClosed, StorageWriteFailed
from trafka.storage.files import write_all
from trafka.storage.index import CorruptIndex, OffsetIndex, TimeIndex
from trafka.storage.txn_index import TXN_INDEX_SUFFIX, TransactionIndex
from trafka.wire import records as rec

log = logging.getLogger("trafka.storage")

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
FILE_SUFFIXES = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX)


def offset_filename(base_offset: int, suffix: str) -> str:
    return f"{base_offset:020d}{suffix}"


def parse_offset_filename(name: str, suffix: str) -> int | None:
    """The offset in a name offset_filename made with `suffix`; None for any other name."""
    if not name.endswith(suffix):
        return None
    digits = name[: -len(suffix)]
    return int(digits) if digits.isascii() and digits.isdigit() else None


def segment_bases(names: Iterable[str]) -> list[int]:
    """The base offsets of the segments among a partition directory's file names, in order."""
    return sorted(base for name in names if (base := parse_offset_filename(name, LOG_SUFFIX)) is not None)


@dataclass(frozen=True)
class ScannedBatch:
    """One batch of a segment file's bytes, as a reader without an open segment sees it."""

    position: int
    header: rec.BatchHeader | None  # None when the bytes left cannot hold a header
    problem: str = ""  # why the batch is invalid; "" when its CRC checks out
    whole: bool = True  # False for a batch cut off at the end of the file


def scan_batches(data: bytes) -> Iterator[ScannedBatch]:
    """Every batch in a .log file's bytes, CRC-checked; stops after one that is cut off (the
    batch a running broker is writing, or a torn tail)."""
    pos = 0
    while pos < len(data):
        try:
            header = rec.parse_header(data, pos)
        except rec.CorruptRecordError:
            yield ScannedBatch(pos, None, f"{len(data) - pos} bytes at the end do not hold a batch header", whole=False)
            return
        if header.batch_length < rec.MIN_BATCH_LENGTH or pos + header.size > len(data):
            yield ScannedBatch(pos, header, f"batch claims {header.size} bytes, {len(data) - pos} are there", whole=False)
            return
        try:
            rec.check_batch(data, pos)
            problem = ""
        except rec.CorruptRecordError as exc:
            problem = str(exc)
        yield ScannedBatch(pos, header, problem)
        pos += header.size


@dataclass(frozen=True)
class FileSlice:
    """A run of whole batches in one segment file, for pread or sendfile.

    Valid until the segment is deleted or swapped out; `read`/`fileno` raise LogClosed after.
    """

    segment: "LogSegment"
    position: int
    size: int

    def fileno(self) -> int:
        return self.segment.fileno()

    def read(self) -> bytes:
        return self.segment.pread(self.position, self.size)

    def __len__(self) -> int:
        return self.size


class TailCorrupt(Exception):
    """A clean-shutdown segment whose tail does not validate; the log recovers it fully."""


class LogSegment:
    def __init__(
        self,
        directory: Path,
        base_offset: int,
        *,
        index_interval_bytes: int,
        created_ms: int,
        suffix: str = "",
        lazy: bool = False,
    ):
        self.directory = directory if isinstance(directory, Path) else Path(directory)
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.created_ms = created_ms
        self.suffix = suffix
        self._fd: int | None = None
        # A lazy segment of a fresh partition has no files until its first write (fileno()):
        # creating 5,000 partitions then costs one mkdir each, not four file creations.
        self._lazy = lazy
        self.size = 0
        if not lazy:
            self._create_files()
        self.next_offset = base_offset
        self.max_timestamp_so_far = rec.NO_TIMESTAMP
        self.offset_of_max_timestamp_so_far = -1
        # Timestamp of the first batch: segment.ms counts from it, so a restart does not reset
        # the age of the active segment (Kafka's rollingBasedTimestamp).
        self.rolling_based_timestamp: int | None = None
        self._bytes_since_last_index_entry = 0
        self._torn = False  # a failed append whose cut-back also failed (see _cut_back)

    # The index objects are made on first use: a never-written partition (thousands of them
    # after a large CreateTopics) then costs no paths or index objects.
    @functools.cached_property
    def offset_index(self) -> OffsetIndex:
        return OffsetIndex(self._path(INDEX_SUFFIX), self.base_offset)

    @functools.cached_property
    def time_index(self) -> TimeIndex:
        return TimeIndex(self._path(TIME_INDEX_SUFFIX), self.base_offset)

    @functools.cached_property
    def txn_index(self) -> TransactionIndex:
        return TransactionIndex(self._path(TXN_INDEX_SUFFIX))

    def _path(self, suffix: str) -> Path:
        return self.directory / (offset_filename(self.base_offset, suffix) + self.suffix)

    @property
    def log_path(self) -> Path:
        return self._path(LOG_SUFFIX)

    @property
    def paths(self) -> list[Path]:
        return [self._path(s) for s in (*FILE_SUFFIXES, TXN_INDEX_SUFFIX)]

    @property
    def last_offset(self) -> int:
        """Largest offset in the segment, base_offset - 1 when empty."""
        return self.next_offset - 1

    def _create_files(self) -> None:
        is_new = not self._path(LOG_SUFFIX).exists()
        self._fd = os.open(self._path(LOG_SUFFIX), os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        self.size = os.fstat(self._fd).st_size
        if is_new:
            # Like Kafka, a segment always has its index files, so a missing one means damage.
            for path in (self.offset_index.path, self.time_index.path):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))

    @property
    def on_disk(self) -> bool:
        """False for a lazy segment nothing was written to yet."""
        return not self._lazy

    @property
    def closed(self) -> bool:
        return self._fd is None and not self._lazy

    def fileno(self) -> int:
        if self._fd is None:
            if not self._lazy:
                raise LogClosed(f"segment {self.log_path} is closed")
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._create_files()
            except OSError:
                self._fd = None
                raise
            self._lazy = False
        return self._fd

    def pread(self, position: int, size: int) -> bytes:
        data = os.pread(self.fileno(), size, position)
        if len(data) != size:
            raise LogClosed(f"segment {self.log_path} holds {len(data)} bytes at {position}, wanted {size}")
        return data

    # --- loading and recovery -------------------------------------------------------------

    def load(self) -> None:
        """Open an existing segment after a clean shutdown: trust the indexes after checking
        them, and CRC-check only the tail after the last index entry (at most about
        index.interval.bytes plus one batch). Raises CorruptIndex / TailCorrupt / OSError."""
        self.offset_index.load(self.size)
        self.time_index.load()
        last_indexed_offset, position = self.offset_index.last_entry
        if len(self.time_index):
            self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far = self.time_index.last_entry
        else:
            # An empty time index has no max timestamp; the batches scanned below may add one.
            self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far = rec.NO_TIMESTAMP, -1
        self.next_offset = last_indexed_offset + 1 if len(self.offset_index) else self.base_offset
        try:
            for _, header in self._scan(position, verify=True):
                self._track(header)
        except rec.CorruptRecordError as exc:
            raise TailCorrupt(f"{self.log_path}: {exc}") from None
        if self.time_index.last_entry[1] >= self.next_offset and len(self.time_index):
            raise CorruptIndex(f"{self.time_index.path} points past the end of the log")
        self._bytes_since_last_index_entry = self.size - position
        self._load_rolling_based_timestamp()

    def recover(self) -> int:
        """Validate every batch, rebuild both indexes, truncate at the first bad batch.

        Returns the number of bytes truncated.
        """
        self.offset_index.clear()
        self.time_index.clear()
        self.next_offset = self.base_offset
        self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far = rec.NO_TIMESTAMP, -1
        self._bytes_since_last_index_entry = 0
        valid_end = 0
        try:
            for pos, header in self._scan(0, verify=True):
                if header.base_offset < self.next_offset:
                    raise rec.CorruptRecordError(
                        f"batch at {pos} has base offset {header.base_offset}, expected >= {self.next_offset}"
                    )
                self._index_batch(pos, header, write=False)
                self._track(header)
                valid_end = pos + header.size
        except rec.CorruptRecordError as exc:
            reason = str(exc)
        else:
            reason = ""
        truncated = self.size - valid_end
        if truncated:
            log.warning(
                "truncated %d bytes of a torn or corrupt batch at position %d of %s (%s)",
                truncated, valid_end, self.log_path, reason or "partial batch",
            )
            os.ftruncate(self.fileno(), valid_end)
            self.size = valid_end
        self.txn_index.truncate_to(self.next_offset)
        self.offset_index.rewrite()
        if self.offset_of_max_timestamp_so_far >= 0:
            self.time_index.maybe_append(self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far, write=False)
        self.time_index.rewrite()
        log.info(
            "rebuilt index %s (%d entries) and %s (%d entries)",
            self.offset_index.path.name, len(self.offset_index), self.time_index.path.name, len(self.time_index),
        )
        self._load_rolling_based_timestamp()
        return truncated

    def _scan(self, position: int, *, verify: bool) -> Iterator[tuple[int, rec.BatchHeader]]:
        """Batches from `position` to the end of the file. With verify, each batch is read
        whole and CRC-checked, and a bad one raises CorruptRecordError."""
        end = self.size
        while position < end:
            if verify:
                head = self.pread_upto(position, rec.HEADER_SIZE)
                header = rec.parse_header(head)
                if header.magic != rec.MAGIC or header.batch_length < rec.MIN_BATCH_LENGTH:
                    raise rec.CorruptRecordError(f"batch at {position} has magic {header.magic} / length {header.batch_length}")
                data = self.pread_upto(position, header.size)
                header = rec.check_batch(data)
            else:
                head = self.pread_upto(position, rec.HEADER_SIZE)
                if len(head) < rec.HEADER_SIZE:
                    return
                header = rec.parse_header(head)
                if header.batch_length < rec.MIN_BATCH_LENGTH or position + header.size > end:
                    return
            yield position, header
            position += header.size

    def pread_upto(self, position: int, size: int) -> bytes:
        return os.pread(self.fileno(), size, position)

    def _load_rolling_based_timestamp(self) -> None:
        first = next(self._scan(0, verify=False), None)
        self.rolling_based_timestamp = first[1].max_timestamp if first else None

    # --- appending ------------------------------------------------------------------------

    def _track(self, header: rec.BatchHeader) -> None:
        if header.max_timestamp > self.max_timestamp_so_far:
            self.max_timestamp_so_far = header.max_timestamp
            self.offset_of_max_timestamp_so_far = header.last_offset
        self.next_offset = header.next_offset

    def _index_batch(self, position: int, header: rec.BatchHeader, *, write: bool) -> None:
        # Same rule as Kafka's LogSegment.append: the batch that starts after more than
        # index.interval.bytes of unindexed log gets an entry.
        if header.max_timestamp > self.max_timestamp_so_far:
            max_ts, max_ts_offset = header.max_timestamp, header.last_offset
        else:
            max_ts, max_ts_offset = self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far
        if self._bytes_since_last_index_entry > self.index_interval_bytes:
            self.offset_index.append(header.last_offset, position, write=write)
            self.time_index.maybe_append(max_ts, max_ts_offset, write=write)
            self._bytes_since_last_index_entry = 0
        self._bytes_since_last_index_entry += header.size

    def append(self, data, batches: list[tuple[int, rec.BatchHeader]]) -> None:
        """Write whole batches (offsets already assigned) and index them.

        `batches` are (position within data, header) pairs. When the disk refuses a write
        (full, EIO, read-only) everything this call wrote is cut back before StorageWriteFailed
        is raised, so the file, the indexes and the in-memory state stay as they were.
        """
        start = self.size
        saved = (
            self.next_offset, self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far,
            self.rolling_based_timestamp, self._bytes_since_last_index_entry,
            len(self.offset_index), len(self.time_index),
        )
        try:
            write_all(self.fileno(), data)
            self.size += len(data)
            for pos, header in batches:
                self._index_batch(start + pos, header, write=True)
                self._track(header)
        except OSError as exc:
            self._cut_back(start, saved, exc)
            raise StorageWriteFailed(f"cannot append to {self.log_path}: {exc.strerror or exc}", exc.errno) from None
        if self.rolling_based_timestamp is None and batches:
            self.rolling_based_timestamp = batches[0][1].max_timestamp

    def _cut_back(self, size: int, saved: tuple, cause: OSError) -> None:
        """Undo a failed append: the file back to `size` bytes, the indexes and counters back
        to `saved`. If even that fails, the segment stays marked and the next append retries."""
        (self.next_offset, self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far,
         self.rolling_based_timestamp, self._bytes_since_last_index_entry, offsets, times) = saved
        self.size = size
        if self._lazy:
            return  # the files could not even be created: nothing was written
        try:
            if os.fstat(self.fileno()).st_size != size:  # nothing to cut when no byte was written
                os.ftruncate(self.fileno(), size)
            self.offset_index.truncate_entries(offsets)
            self.time_index.truncate_entries(times)
            self._torn = False
        except OSError as exc:
            self._torn = True
            log.error("%s: cannot cut back a failed append to %d bytes (%s); retrying before the next append",
                      self.log_path, size, exc.strerror or exc)
        else:
            log.warning("%s: append failed (%s), cut back to %d bytes", self.log_path, cause.strerror or cause, size)

    def repair_torn_tail(self) -> None:
        """Finish a cut-back that failed (see _cut_back); raises StorageWriteFailed if it fails again."""
        if not self._torn:
            return
        try:
            if os.fstat(self.fileno()).st_size != self.size:
                os.ftruncate(self.fileno(), self.size)
            self.offset_index.truncate_entries(len(self.offset_index))
            self.time_index.truncate_entries(len(self.time_index))
        except OSError as exc:
            raise StorageWriteFailed(f"cannot repair {self.log_path}: {exc.strerror or exc}", exc.errno) from None
        self._torn = False

    def record_max_timestamp(self) -> None:
        """Record the segment's max timestamp in the time index so a reload (and retention)
        sees it without scanning (a clean close does this before its flush)."""
        if self.offset_of_max_timestamp_so_far >= 0:
            self.time_index.maybe_append(self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far)

    def on_become_inactive(self) -> None:
        """record_max_timestamp, then release the index descriptors."""
        self.record_max_timestamp()
        self.offset_index.close()
        self.time_index.close()

    # --- reading --------------------------------------------------------------------------

    def read(
        self, start_offset: int, max_size: int, *, min_one_batch: bool, partial_tail: bool = False,
        max_offset: int | None = None,
    ) -> FileSlice | None:
        """Batches from the one holding start_offset, up to max_size bytes (at least the first
        whole batch when min_one_batch). None when no batch here reaches start_offset, or the
        first batch does not fit and min_one_batch is false: Kafka's ReplicaManager answers such
        an incomplete first entry with no records (Fetch v3+), so the partition comes first in a
        later answer instead of as a cut batch that no client can read.

        With partial_tail the slice is a byte range, as Kafka's: from the start batch to
        max_size bytes further (or the end of the segment), and it may end inside a batch,
        which clients drop. Finding the start costs one index lookup and a scan of at most
        index.interval.bytes; the rest costs nothing per batch. Without it, whole batches only.

        max_offset (exclusive) stops the slice before the first batch at or past it (a fetch
        limited to the last stable offset); it costs a second lookup and short scan."""
        _, position = self.offset_index.lookup(start_offset)
        start = first_size = None
        for pos, header in self._scan(position, verify=False):
            if header.last_offset >= start_offset:
                if max_offset is not None and header.base_offset >= max_offset:
                    return None
                start, first_size = pos, header.size
                break
        if start is None:
            return None
        if first_size > max_size and not min_one_batch:
            return None
        if not partial_tail:
            total = first_size
            for _, header in self._scan(start + first_size, verify=False):
                if total + header.size > max_size or (max_offset is not None and header.base_offset >= max_offset):
                    break
                total += header.size
            return FileSlice(self, start, total)
        end = self.size
        if max_offset is not None and max_offset < self.next_offset:
            end = self.position_of(max_offset)
        total = min(end - start, max(max_size, first_size if min_one_batch else 0))
        return FileSlice(self, start, total)

    def position_of(self, offset: int, *, holding: bool = False) -> int:
        """Position of the first batch whose base offset is >= offset, or with `holding` the
        first ending at or after it (the batch holding it); the segment size if none."""
        _, position = self.offset_index.lookup(offset)
        for pos, header in self._scan(position, verify=False):
            if (header.last_offset if holding else header.base_offset) >= offset:
                return pos
        return self.size

    def truncate_at(self, position: int) -> None:
        """Cut the segment to its first `position` bytes (a batch boundary) and rebuild its
        indexes and counters from what remains (a follower's truncation)."""
        os.ftruncate(self.fileno(), position)
        self.size = position
        self.recover()

    def batches_from(self, start_offset: int) -> Iterator[tuple[int, rec.BatchHeader]]:
        """(position, header) of each batch ending at or after start_offset."""
        _, position = self.offset_index.lookup(start_offset)
        for pos, header in self._scan(position, verify=False):
            if header.last_offset >= start_offset:
                yield pos, header

    def find_offset_by_timestamp(self, timestamp: int, start_offset: int) -> tuple[int, int] | None:
        """(timestamp, offset) of the first record at or after start_offset whose timestamp is
        >= timestamp. Decodes only the one batch that holds it."""
        _, indexed_offset = self.time_index.lookup(timestamp)
        for pos, header in self.batches_from(max(indexed_offset, start_offset)):
            if header.max_timestamp >= timestamp:
                for record in rec.decode_records(self.pread(pos, header.size)):
                    if record.timestamp >= timestamp and record.offset >= start_offset:
                        return record.timestamp, record.offset
        return None

    def max_timestamp_record(self) -> tuple[int, int] | None:
        """(max timestamp, offset of the first record carrying it), or None when empty."""
        if self.offset_of_max_timestamp_so_far < 0:
            return None
        for pos, header in self.batches_from(self.offset_of_max_timestamp_so_far):
            for record in rec.decode_records(self.pread(pos, header.size)):
                if record.timestamp == self.max_timestamp_so_far:
                    return record.timestamp, record.offset
            break
        return self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far

    # --- lifecycle ------------------------------------------------------------------------

    def flush(self) -> None:
        if self._lazy:
            return
        os.fsync(self.fileno())
        self.offset_index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def change_suffix(self, suffix: str) -> None:
        """Rename the three files (Kafka's .cleaned -> .swap -> live dance); descriptors stay valid."""
        old = self.paths
        self.offset_index.close()
        self.time_index.close()
        self.suffix = suffix
        for src, dst in zip(old, self.paths):
            if src.exists():
                os.replace(src, dst)
        self.offset_index.path = self._path(INDEX_SUFFIX)
        self.time_index.path = self._path(TIME_INDEX_SUFFIX)
        self.txn_index.path = self._path(TXN_INDEX_SUFFIX)

    def close(self) -> None:
        self._lazy = False  # a closed segment never creates its files
        if "offset_index" in self.__dict__:
            self.offset_index.close()
        if "time_index" in self.__dict__:
            self.time_index.close()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def delete(self) -> None:
        self.close()
        for path in self.paths:
            path.unlink(missing_ok=True)

    def __repr__(self) -> str:
        return f"LogSegment({self.log_path}, base={self.base_offset}, next={self.next_offset}, size={self.size})"
