"""The cluster metadata log: Kafka's `__cluster_metadata-0`, one partition of record batches
with snapshots of the whole image beside it. Storage knows batches, not what they mean
(trafka/broker/metadata/records.py declares the records; image.py applies them).

```
<data dir>/metadata/__cluster_metadata-0/
  00000000000000000000.log ...              record batches, one per change (PartitionLog segments)
  00000000000000000042-0000000000.checkpoint  a snapshot: the image as of offset 42, as batches
```

The log is a `PartitionLog`, so it is the segment store's format byte for byte and opens as any
partition does: a batch torn by a crash at the tail is cut off at open (log_loader.py). It lives
in its own directory, `metadata/`, which is not a partition directory, so the LogManager never
takes it for a topic and no client sees it.

* `append(records)` writes the records as one batch and fsyncs before it returns: a change of
  several records is all there after a crash, or none of it.
* `read()` gives the image's records: the newest snapshot's, then the log's from the snapshot's
  offset on.
* `write_snapshot(records)` writes `<offset>-<epoch>.checkpoint` (offset: the log end offset the
  snapshot covers, exclusive, as Kafka names them; epoch: 0, there is no quorum) atomically
  (temporary file, fsync, rename), then rolls the log and deletes the segments and snapshots
  the new snapshot makes useless. `snapshot_due` says when the log has grown by more than
  `max_bytes_between_snapshots` since the last one (Kafka's
  `metadata.log.max.record.bytes.between.snapshots`) and by more than the last snapshot holds:
  a large image (thousands of partitions) is not written again after every change past the
  bound, each byte appended costs at most one byte of snapshot, and a start reads at most
  about twice the image.

A snapshot or a log batch that cannot be read stops the open with one `MetadataLogCorrupt`
naming the file and what to do; nothing is guessed.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from trafka.storage.config import LogConfig
from trafka.storage.errors import StorageError
from trafka.storage.files import atomic_write
from trafka.storage.log import PartitionLog
from trafka.storage.log_read import replay_log
from trafka.storage.segment import LOG_SUFFIX, scan_batches, segment_bases
from trafka.wire import records as rec

log = logging.getLogger("trafka.storage")

METADATA_DIR = "metadata"
PARTITION_DIR = "__cluster_metadata-0"
SNAPSHOT_SUFFIX = ".checkpoint"
_SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
# Kafka's metadata.log.max.record.bytes.between.snapshots is 20 MiB; trafka's image is small
# and every start replays the log after the snapshot, so it snapshots sooner.
MAX_BYTES_BETWEEN_SNAPSHOTS = 1024 * 1024
_SEGMENT_BYTES = 8 * 1024 * 1024
# One change is one batch, however large (a CreateTopics of 500 topics x 10 partitions is 5,500
# records, ~1.4 MB): bounded by what one request can ask, not by a topic's max.message.bytes.
_MAX_BATCH_BYTES = 256 * 1024 * 1024


class MetadataLogCorrupt(StorageError):
    """The metadata log or a snapshot of it cannot be read: the start stops, naming the file."""


@dataclass(frozen=True)
class LoggedRecord:
    offset: int  # -1 for a snapshot's records
    key: bytes
    value: bytes | None


def metadata_log_dir(data_dir: Path) -> Path:
    return Path(data_dir) / METADATA_DIR / PARTITION_DIR


def snapshot_name(offset: int, epoch: int = 0) -> str:
    return f"{offset:020d}-{epoch:010d}{SNAPSHOT_SUFFIX}"


def snapshots(directory: Path) -> list[tuple[int, Path]]:
    """(offset, path) of every snapshot in the directory, oldest first."""
    found = []
    if directory.is_dir():
        for name in os.listdir(directory):
            match = _SNAPSHOT_NAME.match(name)
            if match:
                found.append((int(match[1]), directory / name))
    return sorted(found)


def _records_of(data: bytes, where: str) -> Iterator[tuple[int, rec.Record]]:
    try:
        for pos, header in rec.iter_batches(data):
            if rec.is_control(header.attributes):
                continue
            for record in rec.iter_records(data, pos):  # one at a time: a CreateTopics batch holds thousands
                yield record.offset, record
    except (rec.CorruptRecordError, ValueError) as exc:
        raise MetadataLogCorrupt(f"{where}: unreadable metadata records ({exc})") from None


def read_offline(data_dir: Path) -> Iterator[LoggedRecord]:
    """The image's records as `MetadataLog.read` gives them, for the offline tools: files only
    read, never recovered or locked (a broker may be running). A batch cut off at the end (being
    written, or torn by a crash) ends the log, as recovery would cut it; a corrupt batch before
    the end is MetadataLogCorrupt."""
    directory = metadata_log_dir(data_dir)
    found = snapshots(directory)
    start = 0
    if found:
        start, path = found[-1]
        for _, record in _records_of(path.read_bytes(), f"{path} (a metadata snapshot)"):
            yield LoggedRecord(-1, record.key, record.value)
    names = os.listdir(directory) if directory.is_dir() else []
    for base in segment_bases(names):
        path = directory / f"{base:020d}{LOG_SUFFIX}"
        data = path.read_bytes()
        for scanned in scan_batches(data):
            if not scanned.whole:
                return
            if scanned.problem:
                raise MetadataLogCorrupt(f"{path}: {scanned.problem}")
            header = scanned.header
            if header.base_offset + header.last_offset_delta < start or rec.is_control(header.attributes):
                continue
            for offset, record in _records_of(data[scanned.position:scanned.position + header.size], str(path)):
                if offset >= start:
                    yield LoggedRecord(offset, record.key, record.value)


class MetadataLog:
    def __init__(self, data_dir: Path, *, clock=None,
                 max_bytes_between_snapshots: int = MAX_BYTES_BETWEEN_SNAPSHOTS, lock: bool = True):
        """`lock=False`: no lock file (a store's own log in a unit test, reopened without a close)."""
        self.directory = metadata_log_dir(data_dir)
        self.max_bytes_between_snapshots = max_bytes_between_snapshots
        self._clock = clock
        self._lock = self._take_lock() if lock else -1
        config = LogConfig.of({"segment.bytes": str(_SEGMENT_BYTES), "retention.ms": "-1",
                               "retention.bytes": "-1", "max.message.bytes": str(_MAX_BATCH_BYTES)})
        # A log whose files cannot be opened stops the start with the cause, not a traceback.
        try:
            self.log = PartitionLog(self.directory, config, clock=clock)
        except (OSError, StorageError, rec.CorruptRecordError, ValueError) as exc:
            if self._lock >= 0:
                os.close(self._lock)
            raise MetadataLogCorrupt(f"{self.directory}: cannot open the metadata log ({exc})") from None
        try:
            self._check_snapshots()
        except MetadataLogCorrupt:
            self.close()
            raise

    def _check_snapshots(self) -> None:
        found = snapshots(self.directory)
        self.snapshot_offset = found[-1][0] if found else 0
        self.snapshot_bytes = found[-1][1].stat().st_size if found else 0
        self.bytes_since_snapshot = self._bytes_after(self.snapshot_offset)
        if self.log.log_start_offset > self.snapshot_offset:
            raise MetadataLogCorrupt(
                f"{self.directory}: the log starts at offset {self.log.log_start_offset} but no snapshot covers "
                "the offsets before it (a snapshot file is missing); restore it from a backup")
        if self.snapshot_offset > self.log.log_end_offset:
            raise MetadataLogCorrupt(
                f"{found[-1][1]}: the snapshot is at offset {self.snapshot_offset}, past the log's end "
                f"{self.log.log_end_offset} (segments are missing); restore them from a backup")

    def _take_lock(self) -> int:
        """One process per metadata log (the LogManager locks the data dir later, after the
        stores were rebuilt from this log)."""
        self.directory.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.directory.parent / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise StorageError(f"{self.directory.parent.parent} is in use by another process "
                               f"(its metadata log {self.directory.parent} is locked)") from None
        return fd

    def _bytes_after(self, offset: int) -> int:
        return sum(s.size for s in self.log.segments if s.next_offset > offset)

    @property
    def empty(self) -> bool:
        """Nothing was ever written (no snapshot, no batch): a first start, or an upgrade."""
        return self.log.log_end_offset == 0 and self.snapshot_offset == 0

    @property
    def end_offset(self) -> int:
        return self.log.log_end_offset

    # --- reading ----------------------------------------------------------------------------

    def read(self) -> Iterator[LoggedRecord]:
        """The newest snapshot's records, then the log's from the snapshot's offset on."""
        found = snapshots(self.directory)
        if found:
            offset, path = found[-1]
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise MetadataLogCorrupt(f"{path}: cannot read the metadata snapshot ({exc.strerror or exc})") from None
            for _, record in _records_of(data, f"{path} (a metadata snapshot; a torn one is never renamed "
                                                  "into place, so the file was damaged afterwards)"):
                yield LoggedRecord(-1, record.key, record.value)
        start = self.snapshot_offset
        if start >= self.log.log_end_offset:
            return

        def entries(data: bytes, offset: int):
            end = offset
            for record_offset, record in _records_of(data, f"{self.directory} at offset {offset}"):
                end = record_offset + 1
                if record_offset >= start:
                    yield LoggedRecord(record_offset, record.key, record.value)
            return end

        yield from replay_log(self.log, entries)

    # --- writing ----------------------------------------------------------------------------

    def append(self, records: Iterable[tuple[bytes, bytes | None]]) -> int:
        """The records as one batch, fsynced before this returns; the batch's base offset.
        Raises the storage errors of PartitionLog.append (nothing is written then) or OSError
        from the fsync (the batch may be there, unsynced: the caller must not apply it)."""
        now = self._clock.time_ms() if self._clock is not None else int(time.time() * 1000)
        batch = rec.encode_keyed_batch(list(records), now)
        info = self.log.append(batch)
        # fsync the segment itself (a roll fsynced the ones before): not PartitionLog.flush, whose
        # FlushPlan is the broker's off-loop flush of topic partitions, nor its recovery point,
        # since every open checks the active segment anyway.
        self.log.active_segment.flush()
        self.bytes_since_snapshot += len(batch)
        return info.base_offset

    @property
    def snapshot_due(self) -> bool:
        return self.bytes_since_snapshot > max(self.max_bytes_between_snapshots, self.snapshot_bytes)

    def write_snapshot(self, records: Iterable[tuple[bytes, bytes | None]]) -> Path:
        """The whole image as of the log end, atomically; then older segments and snapshots go."""
        plan = self.plan_snapshot(records)
        plan.write()
        return self.finish_snapshot(plan)

    def plan_snapshot(self, records: Iterable[tuple[bytes, bytes | None]]) -> "SnapshotPlan":
        """A snapshot of `records` (the image now) as of the log end, to be written by
        `SnapshotPlan.write` (in a worker thread: it touches no state of this log) and finished
        by `finish_snapshot` (on the caller's thread, like every append)."""
        return SnapshotPlan(self.directory, self.log.log_end_offset, self.bytes_since_snapshot, records)

    def finish_snapshot(self, plan: "SnapshotPlan") -> Path:
        """After `plan.write()`: the snapshot counts from now, and the segments and older
        snapshots it makes useless go (appends made meanwhile stay: they are after its offset)."""
        offset = plan.offset
        self.snapshot_offset, self.snapshot_bytes = offset, plan.size
        self.bytes_since_snapshot = max(self.bytes_since_snapshot - plan.bytes_before, 0)
        log.info("%s: wrote metadata snapshot %s", self.directory, plan.path.name)
        # The log before the snapshot is no longer needed: roll, then drop the whole segments below it.
        if self.log.active_segment.size:
            self.log.roll()
        if offset > self.log.log_start_offset:
            self.log.delete_records_before(offset)
        for older, older_path in snapshots(self.directory):
            if older < offset:
                older_path.unlink(missing_ok=True)
        return plan.path

    @property
    def closed(self) -> bool:
        return self._lock is None

    def close(self) -> None:
        """Every append was fsynced: close the files without a clean-shutdown marker, so each
        open checks the active segment's batches (a torn tail is cut there)."""
        if self._lock is None:
            return
        self.log.abandon()
        if self._lock >= 0:
            os.close(self._lock)
        self._lock = None


class SnapshotPlan:
    """A metadata snapshot being written: its offset, and the image's records as of then."""

    def __init__(self, directory: Path, offset: int, bytes_before: int, records):
        self.offset, self.bytes_before, self.records = offset, bytes_before, records
        self.path = directory / snapshot_name(offset)
        self.size = 0

    def write(self) -> None:
        """Encode the records as batches and write the file atomically (temporary file, fsync,
        rename, directory fsync). Raises OSError; then nothing changed."""
        batches, chunk = [], []
        for key, value in self.records:
            chunk.append(rec.Record(key, value, (), 0))
            if len(chunk) == 1000:
                batches.append(rec.encode_batch(chunk, base_offset=len(batches) * 1000))
                chunk = []
        if chunk:
            batches.append(rec.encode_batch(chunk, base_offset=len(batches) * 1000))
        data = b"".join(batches)
        atomic_write(self.path, data)
        self.size = len(data)
