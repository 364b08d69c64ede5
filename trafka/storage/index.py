"""Sparse segment indexes, byte-compatible with Kafka's OffsetIndex and TimeIndex.

`.index` entries are (relative offset i32, position i32), 8 bytes; `.timeindex` entries are
(timestamp i64, relative offset i32), 12 bytes; both big-endian, offsets relative to the
segment's base offset. An entry is added about every index.interval.bytes of log, so a lookup
lands at most that far before the wanted batch and the caller scans forward from there.

Unlike Kafka we do not preallocate and mmap the files: the entries live in memory (a few bytes
per 4 KiB of log) and are appended to the file as they are made.
"""

from __future__ import annotations

import bisect
import os
import struct
from array import array
from pathlib import Path

from trafka.storage.files import atomic_write, write_all

OFFSET_ENTRY = struct.Struct(">ii")
TIME_ENTRY = struct.Struct(">qi")


class CorruptIndex(Exception):
    """The index file does not agree with itself or its segment; the segment rebuilds it."""


class _Index:
    ENTRY: struct.Struct

    def __init__(self, path: Path, base_offset: int):
        self.path = path
        self.base_offset = base_offset
        self._fd: int | None = None

    def _open_for_append(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        return self._fd

    def _read_entries(self) -> list[tuple[int, int]]:
        data = self.path.read_bytes()
        if len(data) % self.ENTRY.size:
            raise CorruptIndex(f"{self.path} is {len(data)} bytes, not a multiple of {self.ENTRY.size}")
        return list(self.ENTRY.iter_unpack(data))

    def _append_entry(self, *fields) -> None:
        write_all(self._open_for_append(), self.ENTRY.pack(*fields))

    def rewrite(self) -> None:
        """Replace the file with the in-memory entries (after a rebuild or truncation)."""
        self.close()
        atomic_write(self.path, b"".join(self.ENTRY.pack(*e) for e in self.entries()))

    def flush(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)

    def truncate_entries(self, count: int) -> None:
        """Keep the first `count` entries, in memory and in the file (a refused append's
        entries are taken back). The file is cut even when no entry was dropped in memory,
        since a failed write may have left part of one."""
        self._drop_from(count)
        size = count * self.ENTRY.size
        if self.path.exists() and os.stat(self.path).st_size != size:
            os.truncate(self.path, size)

    def _drop_from(self, count: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def entries(self) -> list[tuple[int, int]]:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class OffsetIndex(_Index):
    ENTRY = OFFSET_ENTRY

    def __init__(self, path: Path, base_offset: int):
        super().__init__(path, base_offset)
        self._offsets = array("q")  # absolute offsets, for bisect
        self._positions = array("q")

    def load(self, log_size: int) -> None:
        """Read the file and sanity-check it against the segment's log size (Kafka's sanityCheck)."""
        self.clear()
        last = -1
        for relative, position in self._read_entries():
            if relative <= last or not 0 <= position < log_size:
                raise CorruptIndex(f"{self.path}: entry ({relative}, {position}) is out of order or past the log")
            last = relative
            self._offsets.append(self.base_offset + relative)
            self._positions.append(position)

    def clear(self) -> None:
        del self._offsets[:], self._positions[:]

    def append(self, offset: int, position: int, *, write: bool = True) -> None:
        if self._offsets and offset <= self._offsets[-1]:
            return
        self._offsets.append(offset)
        self._positions.append(position)
        if write:
            self._append_entry(offset - self.base_offset, position)

    def lookup(self, offset: int) -> tuple[int, int]:
        """(offset, position) of the largest entry <= offset, or (base offset, 0)."""
        i = bisect.bisect_right(self._offsets, offset) - 1
        if i < 0:
            return self.base_offset, 0
        return self._offsets[i], self._positions[i]

    def _drop_from(self, count: int) -> None:
        del self._offsets[count:], self._positions[count:]

    @property
    def last_entry(self) -> tuple[int, int]:
        if not self._offsets:
            return self.base_offset, 0
        return self._offsets[-1], self._positions[-1]

    def entries(self) -> list[tuple[int, int]]:
        return [(o - self.base_offset, p) for o, p in zip(self._offsets, self._positions)]

    def __len__(self) -> int:
        return len(self._offsets)


class TimeIndex(_Index):
    """Entries are (max timestamp so far, offset where it was reached), strictly increasing in
    timestamp, so a lookup never skips a record with a timestamp >= the one asked for."""

    ENTRY = TIME_ENTRY

    def __init__(self, path: Path, base_offset: int):
        super().__init__(path, base_offset)
        self._timestamps = array("q")
        self._offsets = array("q")

    def load(self, next_offset_bound: int | None = None) -> None:
        self.clear()
        for timestamp, relative in self._read_entries():
            offset = self.base_offset + relative
            if self._timestamps and (timestamp <= self._timestamps[-1] or offset < self._offsets[-1]):
                raise CorruptIndex(f"{self.path}: entry ({timestamp}, {relative}) is out of order")
            if relative < 0 or (next_offset_bound is not None and offset >= next_offset_bound):
                raise CorruptIndex(f"{self.path}: entry ({timestamp}, {relative}) points past the log")
            self._timestamps.append(timestamp)
            self._offsets.append(offset)

    def clear(self) -> None:
        del self._timestamps[:], self._offsets[:]

    def maybe_append(self, timestamp: int, offset: int, *, write: bool = True) -> None:
        if self._timestamps and timestamp <= self._timestamps[-1]:
            return
        self._timestamps.append(timestamp)
        self._offsets.append(offset)
        if write:
            self._append_entry(timestamp, offset - self.base_offset)

    def lookup(self, timestamp: int) -> tuple[int, int]:
        """(timestamp, offset) of the largest entry with timestamp <= target, or (-1, base)."""
        i = bisect.bisect_right(self._timestamps, timestamp) - 1
        if i < 0:
            return -1, self.base_offset
        return self._timestamps[i], self._offsets[i]

    def _drop_from(self, count: int) -> None:
        del self._timestamps[count:], self._offsets[count:]

    @property
    def last_entry(self) -> tuple[int, int]:
        if not self._timestamps:
            return -1, self.base_offset
        return self._timestamps[-1], self._offsets[-1]

    def entries(self) -> list[tuple[int, int]]:
        return [(t, o - self.base_offset) for t, o in zip(self._timestamps, self._offsets)]

    def __len__(self) -> int:
        return len(self._timestamps)
