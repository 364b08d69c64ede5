"""The transaction index of one segment (Kafka's `.txnindex`): the aborted transactions whose
ABORT marker is in that segment, so a read_committed Fetch can list the aborted transactions
overlapping what it returns without decoding batches.

Kafka's file format, one 34-byte entry per aborted transaction, appended in marker order:
version (int16, 0), producer id (int64), first offset (int64), last offset (int64, the marker's
offset), last stable offset (int64, the partition's LSO once the marker was written).
The file only exists once a segment holds an ABORT marker.
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from pathlib import Path

from trafka.storage.files import atomic_write, fsync_file

log = logging.getLogger("trafka.storage")

TXN_INDEX_SUFFIX = ".txnindex"
_ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = _ENTRY.size  # 34
_VERSION = 0


@dataclass(frozen=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TransactionIndex:
    def __init__(self, path: Path):
        self.path = path if isinstance(path, Path) else Path(path)
        self._entries: list[AbortedTxn] | None = None  # read on first use

    @property
    def entries(self) -> list[AbortedTxn]:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def _read(self) -> list[AbortedTxn]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        usable = len(data) - len(data) % ENTRY_SIZE
        if usable != len(data):
            log.warning("%s: ignoring a torn entry of %d bytes at its end", self.path, len(data) - usable)
        entries = []
        for pos in range(0, usable, ENTRY_SIZE):
            version, pid, first, last, lso = _ENTRY.unpack_from(data, pos)
            if version != _VERSION:
                log.warning("%s: entry %d has unknown version %d, ignoring the rest", self.path, pos // ENTRY_SIZE, version)
                break
            entries.append(AbortedTxn(pid, first, last, lso))
        return entries

    def append(self, entry: AbortedTxn) -> None:
        """Add an aborted transaction (idempotent: replay after a crash may add it again)."""
        entries = self.entries
        if entries and entries[-1].last_offset >= entry.last_offset:
            if any(e.last_offset == entry.last_offset for e in entries):
                return
        entries.append(entry)
        with open(self.path, "ab") as f:
            f.write(_ENTRY.pack(_VERSION, entry.producer_id, entry.first_offset, entry.last_offset, entry.last_stable_offset))

    def truncate_to(self, offset: int) -> None:
        """Drop entries whose marker is at or above `offset` (the segment was truncated)."""
        kept = [e for e in self.entries if e.last_offset < offset]
        if len(kept) != len(self.entries):
            self._entries = kept
            self.rewrite()

    def rewrite(self) -> None:
        if not self.entries:
            self.path.unlink(missing_ok=True)
            return
        atomic_write(self.path, b"".join(
            _ENTRY.pack(_VERSION, e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset) for e in self.entries
        ))

    def collect_aborted(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound)."""
        return [e for e in self.entries if e.last_offset >= fetch_offset and e.first_offset < upper_bound]

    def flush(self) -> None:
        if self._entries and self.path.exists():
            fsync_file(self.path)
