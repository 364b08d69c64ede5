"""Idempotent-producer state of one partition, scaled down from Kafka's ProducerStateManager.

Per producer id: the current epoch and the metadata of its last 5 batches (Kafka's
NUM_BATCHES_TO_RETAIN, matching max.in.flight.requests.per.connection <= 5). A retried batch that
matches one of them is a duplicate: the log answers with the original offsets and writes
nothing. The state is derived from batch headers only (producerId, producerEpoch,
baseSequence, lastOffsetDelta), so it can always be rebuilt by scanning the log; snapshots
(`<offset>.snapshot`, JSON) spare a restart most of that scan.

Transactions: each producer's open transaction is its first offset (set by its first
transactional batch, cleared by its COMMIT/ABORT marker). The smallest open first offset is the
partition's first unstable offset, which bounds the last stable offset.
"""

from __future__ import annotations

import json
import logging
import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from trafka.storage.errors import InvalidProducerEpoch, InvalidTxnState, OutOfOrderSequence
from trafka.storage.files import atomic_write
from trafka.storage.segment import offset_filename, parse_offset_filename
from trafka.wire import records as rec

log = logging.getLogger("trafka.storage")

BATCHES_TO_RETAIN = 5
SNAPSHOT_SUFFIX = ".snapshot"
SNAPSHOTS_TO_KEEP = 2
_SNAPSHOT_VERSION = 2  # 2 added each producer's open transaction; 1 is still read
NO_TXN = -1


@dataclass(frozen=True)
class BatchMetadata:
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int  # the batch's max timestamp: the log append time when that applied


@dataclass
class ProducerStateEntry:
    producer_id: int
    producer_epoch: int
    batches: deque = field(default_factory=lambda: deque(maxlen=BATCHES_TO_RETAIN))
    current_txn_first_offset: int = NO_TXN

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else rec.NO_SEQUENCE

    @property
    def last_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    def find_duplicate(self, header: rec.BatchHeader) -> BatchMetadata | None:
        if header.producer_epoch != self.producer_epoch:
            return None
        for batch in self.batches:
            if batch.first_seq == header.base_sequence and batch.last_seq == header.last_sequence:
                return batch
        return None

    def update_epoch(self, epoch: int) -> None:
        if epoch != self.producer_epoch:
            self.producer_epoch = epoch
            self.batches.clear()

    def add(self, header: rec.BatchHeader) -> None:
        self.update_epoch(header.producer_epoch)
        if header.is_transactional and self.current_txn_first_offset == NO_TXN:
            self.current_txn_first_offset = header.base_offset
        if header.base_sequence < 0:
            return  # a transactional batch without sequences (offset commits): txn state only
        self.batches.append(
            BatchMetadata(header.base_sequence, header.last_sequence, header.base_offset,
                          header.last_offset, header.max_timestamp)
        )

    def copy(self) -> "ProducerStateEntry":
        return ProducerStateEntry(
            self.producer_id, self.producer_epoch, deque(self.batches, maxlen=BATCHES_TO_RETAIN),
            self.current_txn_first_offset,
        )


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == rec.INT32_MAX)


def has_producer_state(header: rec.BatchHeader) -> bool:
    """Batches the producer state follows: idempotent ones, and every transactional one."""
    return header.producer_id >= 0 and (header.base_sequence >= 0 or header.is_transactional)


@dataclass(frozen=True)
class CompletedTxn:
    producer_id: int
    first_offset: int
    last_offset: int  # the marker's offset
    aborted: bool


class ProducerAppendInfo:
    """The producer-state changes one append would make, checked before anything is written
    and applied with `ProducerStateManager.commit` once the bytes are in the log."""

    def __init__(self, manager: "ProducerStateManager"):
        self._manager = manager
        self.updated: dict[int, ProducerStateEntry] = {}

    def check(self, header: rec.BatchHeader) -> BatchMetadata | None:
        """Validate one batch (offsets already assigned). Returns the original batch when it
        is a duplicate; raises InvalidProducerEpoch / OutOfOrderSequence like Kafka's
        ProducerAppendInfo."""
        pid = header.producer_id
        current = self._manager.producers.get(pid)
        if current is not None and header.base_sequence >= 0 and (duplicate := current.find_duplicate(header)):
            return duplicate
        entry = self.updated.get(pid) or (current.copy() if current else None)
        if entry is not None and header.producer_epoch >= entry.producer_epoch and not header.is_transactional \
                and entry.current_txn_first_offset != NO_TXN:
            raise InvalidTxnState(f"producer {pid} sent a non-transactional batch inside an open transaction")
        if entry is not None and header.base_sequence < 0:
            if header.producer_epoch < entry.producer_epoch:
                raise InvalidProducerEpoch(
                    f"producer {pid} epoch {header.producer_epoch} is older than the current epoch {entry.producer_epoch}"
                )
        elif entry is not None:
            if header.producer_epoch < entry.producer_epoch:
                raise InvalidProducerEpoch(
                    f"producer {pid} epoch {header.producer_epoch} is older than the current epoch {entry.producer_epoch}"
                )
            if header.producer_epoch != entry.producer_epoch:
                if header.base_sequence != 0:
                    raise OutOfOrderSequence(
                        f"producer {pid} started epoch {header.producer_epoch} at sequence {header.base_sequence}, not 0"
                    )
            elif not _in_sequence(entry.last_seq, header.base_sequence):
                raise OutOfOrderSequence(
                    f"producer {pid} epoch {header.producer_epoch}: sequence {header.base_sequence} "
                    f"does not follow {entry.last_seq}"
                )
        else:
            # No state (a new producer, or its batches were all deleted): accept any sequence.
            entry = ProducerStateEntry(pid, header.producer_epoch)
        entry.add(header)
        self.updated[pid] = entry
        return None


def read_snapshot(path: Path, offset: int) -> dict[int, ProducerStateEntry]:
    """The producers of the snapshot file taken at `offset`, by producer id; raises OSError,
    ValueError, KeyError or TypeError for a file that is not one."""
    body = json.loads(path.read_text())
    if body["version"] not in (1, _SNAPSHOT_VERSION) or body["offset"] != offset:
        raise ValueError("unexpected version or offset")
    producers = {}
    for p in body["producers"]:
        entry = ProducerStateEntry(p["producer_id"], p["producer_epoch"])
        entry.current_txn_first_offset = p.get("txn_first_offset", NO_TXN)
        entry.batches.extend(BatchMetadata(*b) for b in p["batches"])
        producers[entry.producer_id] = entry
    return producers


class ProducerStateManager:
    def __init__(self, directory: Path):
        self.directory = directory if isinstance(directory, Path) else Path(directory)
        self.producers: dict[int, ProducerStateEntry] = {}
        # producer id -> first offset of its open transaction: the few producers that matter
        # for the last stable offset, kept apart so a Fetch never walks every producer.
        self.open_txns: dict[int, int] = {}
        # The offset of the newest snapshot loaded or written by this manager: a clean close
        # at that same log end offset has nothing new to snapshot.
        self.latest_snapshot_offset: int | None = None

    def first_unstable_offset(self) -> int | None:
        """The first offset of the oldest open transaction, None when none is open."""
        return min(self.open_txns.values(), default=None)

    def _track_txn(self, entry: ProducerStateEntry) -> None:
        if entry.current_txn_first_offset != NO_TXN:
            self.open_txns[entry.producer_id] = entry.current_txn_first_offset
        else:
            self.open_txns.pop(entry.producer_id, None)

    def check_marker(self, producer_id: int, producer_epoch: int) -> None:
        """Kafka refuses a marker older than the producer's epoch (a zombie coordinator)."""
        entry = self.producers.get(producer_id)
        if entry is not None and producer_epoch < entry.producer_epoch:
            raise InvalidProducerEpoch(
                f"marker for producer {producer_id} has epoch {producer_epoch}, older than {entry.producer_epoch}"
            )

    def complete_txn(self, producer_id: int, producer_epoch: int, marker_offset: int, commit: bool) -> CompletedTxn | None:
        """Apply a COMMIT/ABORT marker; the transaction it ends, or None when none was open
        (a marker for a partition the transaction never wrote to)."""
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = self.producers[producer_id] = ProducerStateEntry(producer_id, producer_epoch)
        entry.update_epoch(producer_epoch)
        first = entry.current_txn_first_offset
        entry.current_txn_first_offset = NO_TXN
        self.open_txns.pop(producer_id, None)
        if first == NO_TXN:
            return None
        return CompletedTxn(producer_id, first, marker_offset, not commit)

    def prepare(self) -> ProducerAppendInfo:
        return ProducerAppendInfo(self)

    def commit(self, info: ProducerAppendInfo) -> None:
        self.producers.update(info.updated)
        for entry in info.updated.values():
            self._track_txn(entry)

    def update_from_log(self, header: rec.BatchHeader) -> None:
        """Replay a batch already in the log (rebuild at startup); no checks."""
        entry = self.producers.get(header.producer_id)
        if entry is None:
            entry = self.producers[header.producer_id] = ProducerStateEntry(header.producer_id, header.producer_epoch)
        entry.add(header)
        self._track_txn(entry)

    def on_log_start_offset_incremented(self, log_start_offset: int) -> None:
        """Forget producers whose every batch is now below the log start (Kafka does the same),
        so their next batch is accepted at any sequence; an open transaction keeps its producer."""
        for pid in [
            p for p, e in self.producers.items()
            if e.last_offset < log_start_offset and e.current_txn_first_offset == NO_TXN
        ]:
            del self.producers[pid]

    # --- snapshots ------------------------------------------------------------------------

    def _snapshot_path(self, offset: int) -> Path:
        return self.directory / offset_filename(offset, SNAPSHOT_SUFFIX)

    def snapshot_offsets(self, names: Iterable[str] | None = None) -> list[int]:
        """Offsets of the snapshots in the directory; `names` is its listing when the caller
        has one (a partition's load lists its directory once)."""
        if names is None:
            try:
                names = os.listdir(self.directory)
            except FileNotFoundError:
                names = ()
        return sorted(offset for name in names if (offset := parse_offset_filename(name, SNAPSHOT_SUFFIX)) is not None)

    def take_snapshot(self, offset: int) -> None:
        """Write the state as of `offset` (the log end offset), keeping the newest few."""
        self.write_snapshot(*self.snapshot(offset))

    def snapshot(self, offset: int) -> tuple[Path, str]:
        """The state as of `offset`, as the file and text `write_snapshot` writes (taken on the
        loop at a roll, written later in a worker thread)."""
        body = {
            "version": _SNAPSHOT_VERSION,
            "offset": offset,
            "producers": [
                {
                    "producer_id": e.producer_id,
                    "producer_epoch": e.producer_epoch,
                    "batches": [[b.first_seq, b.last_seq, b.first_offset, b.last_offset, b.timestamp] for b in e.batches],
                    "txn_first_offset": e.current_txn_first_offset,
                }
                for e in self.producers.values()
            ],
        }
        return self._snapshot_path(offset), json.dumps(body)

    def write_snapshot(self, path: Path, text: str) -> None:
        atomic_write(path, text)
        offset = int(path.name[: -len(SNAPSHOT_SUFFIX)])
        self.latest_snapshot_offset = max(offset, self.latest_snapshot_offset or -1)
        for old in self.snapshot_offsets()[:-SNAPSHOTS_TO_KEEP]:
            self._snapshot_path(old).unlink(missing_ok=True)

    def delete_snapshots_above(self, offset: int, names: Iterable[str] | None = None) -> bool:
        """Returns whether any snapshot was deleted."""
        deleted = False
        for snap in self.snapshot_offsets(names):
            if snap > offset:
                self._snapshot_path(snap).unlink(missing_ok=True)
                deleted = True
        return deleted

    def load_latest_snapshot(self, names: Iterable[str] | None = None) -> int | None:
        """Load the newest readable snapshot; returns its offset, or None if there is none."""
        for offset in reversed(self.snapshot_offsets(names)):
            path = self._snapshot_path(offset)
            try:
                producers = read_snapshot(path, offset)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("ignoring unreadable producer state snapshot %s: %s", path, exc)
                path.unlink(missing_ok=True)
                continue
            self.producers = producers
            self.open_txns = {}
            for entry in producers.values():
                self._track_txn(entry)
            self.latest_snapshot_offset = offset
            return offset
        return None

    def rebuild(self, snapshot_offset: int | None, batches: Iterable[tuple[rec.BatchHeader, int | None]]) -> Iterable[CompletedTxn]:
        """Replay the given batches (those after the snapshot): (header, control type or None).
        Yields each transaction a replayed marker completes, so the log can restore its
        transaction index."""
        if snapshot_offset is None:
            self.producers.clear()
            self.open_txns.clear()
        for header, control in batches:
            if control is not None:
                done = self.complete_txn(header.producer_id, header.producer_epoch, header.base_offset, control == rec.CONTROL_COMMIT)
                if done is not None:
                    yield done
            elif has_producer_state(header):
                self.update_from_log(header)
