"""Offline, read-only views of a data directory: `trafka dump-log` and `trafka describe`.

Files are opened read-only and the data-dir lock is not taken, so both work while a broker
runs. A batch the broker is writing at that moment may be cut off at the end of the active
segment; it is reported (dump-log) or left out (describe), never "repaired".
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generator, Iterable, Iterator, TypeVar

from trafka.storage.index import OFFSET_ENTRY, TIME_ENTRY
from trafka.storage.log_loader import LOG_START_OFFSET_FILE, read_checkpoint
from trafka.storage.topic_store import parse_partition_dir, partition_dir
from trafka.storage.topic_store import TopicMetadata, read_topics
from trafka.storage.producer_state import SNAPSHOT_SUFFIX, read_snapshot
from trafka.storage.segment import (
    INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, offset_filename, parse_offset_filename, scan_batches, segment_bases,
)
from trafka.storage.txn_index import TXN_INDEX_SUFFIX, TransactionIndex
from trafka.wire import records as rec


T = TypeVar("T")


def _base_offset(path: Path, suffix: str) -> int:
    base = parse_offset_filename(path.name, suffix)
    if base is None:
        raise ValueError(f"{path}: not named by a base offset (20 digits, then {suffix})")
    return base


def segment_paths(directory: Path) -> list[Path]:
    """A partition directory's segment (.log) files, by base offset."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        names = []
    return [directory / offset_filename(base, LOG_SUFFIX) for base in segment_bases(names)]


def _text(data: bytes | None) -> str:
    if data is None:
        return "null"
    return data.decode("utf-8", errors="backslashreplace")


def dump_log_file(path: Path, print_data_log: bool = False) -> Iterator[str]:
    """Lines describing a .log file's batches (and records), in kafka-dump-log's spirit."""
    data = path.read_bytes()
    yield f"Dumping {path}"
    yield f"Log starting offset: {_base_offset(path, LOG_SUFFIX)}"
    for batch in scan_batches(data):
        pos, header, problem = batch.position, batch.header, batch.problem
        if not batch.whole:
            yield f"position: {pos} incomplete: {problem}"
            return
        last_sequence = header.last_sequence
        timestamp_type = "LogAppendTime" if header.timestamp_type == rec.TimestampType.LOG_APPEND_TIME else "CreateTime"
        yield (
            f"baseOffset: {header.base_offset} lastOffset: {header.last_offset} count: {header.record_count} "
            f"baseSequence: {header.base_sequence} lastSequence: {last_sequence} producerId: {header.producer_id} "
            f"producerEpoch: {header.producer_epoch} partitionLeaderEpoch: {header.partition_leader_epoch} "
            f"isTransactional: {str(header.is_transactional).lower()} isControl: {str(header.is_control).lower()} "
            f"position: {pos} baseTimestamp: {header.base_timestamp} {timestamp_type}: {header.max_timestamp} "
            f"size: {header.size} magic: {header.magic} compresscodec: {header.compression.name.lower()} "
            f"crc: {header.crc} isvalid: {str(not problem).lower()}"
        )
        if problem:
            yield f"  invalid: {problem}"
            continue
        if header.is_control:
            # Transaction markers are printed always, as Kafka's dump tool shows them.
            for record in rec.decode_records(data, pos):
                kind = _CONTROL_NAMES.get(_control_kind(record.key), "UNKNOWN")
                yield (
                    f"| offset: {record.offset} {timestamp_type}: {record.timestamp} "
                    f"endTxnMarker: {kind} coordinatorEpoch: {rec.control_coordinator_epoch(record.value)}"
                )
            continue
        if print_data_log:
            for index, record in enumerate(rec.decode_records(data, pos)):
                sequence = header.base_sequence + index if header.base_sequence >= 0 else -1
                header_keys = ",".join(name for name, _ in record.headers)
                yield (
                    f"| offset: {record.offset} {timestamp_type}: {record.timestamp} "
                    f"keySize: {-1 if record.key is None else len(record.key)} "
                    f"valueSize: {-1 if record.value is None else len(record.value)} sequence: {sequence} "
                    f"headerKeys: [{header_keys}] key: {_text(record.key)} payload: {_text(record.value)}"
                )


_CONTROL_NAMES = {rec.CONTROL_ABORT: "ABORT", rec.CONTROL_COMMIT: "COMMIT"}


def _control_kind(key: bytes | None) -> int:
    return int.from_bytes(key[2:4], "big", signed=True) if key is not None and len(key) >= 4 else -1


def dump_txn_index_file(path: Path) -> Iterator[str]:
    if not path.is_file():
        raise FileNotFoundError(f"[Errno 2] No such file or directory: '{path}'")
    yield f"Dumping {path}"
    index = TransactionIndex(path)
    for entry in index.entries:
        yield (
            f"version: 0 producerId: {entry.producer_id} firstOffset: {entry.first_offset} "
            f"lastOffset: {entry.last_offset} lastStableOffset: {entry.last_stable_offset}"
        )


def _dump_entries(path: Path, suffix: str, entry, describe: Callable[[int, tuple], str]) -> Iterator[str]:
    base = _base_offset(path, suffix)
    data = path.read_bytes()
    yield f"Dumping {path}"
    usable = len(data) - len(data) % entry.size
    for fields in entry.iter_unpack(data[:usable]):
        yield describe(base, fields)
    if usable != len(data):
        yield f"{len(data) - usable} trailing bytes are not a whole entry"


def dump_index_file(path: Path) -> Iterator[str]:
    return _dump_entries(path, INDEX_SUFFIX, OFFSET_ENTRY,
                         lambda base, entry: f"offset: {base + entry[0]} position: {entry[1]}")


def dump_time_index_file(path: Path) -> Iterator[str]:
    return _dump_entries(path, TIME_INDEX_SUFFIX, TIME_ENTRY,
                         lambda base, entry: f"timestamp: {entry[0]} offset: {base + entry[1]}")


def dump(path: Path, print_data_log: bool = False) -> Iterator[str]:
    """Dispatch on the file's suffix; raises ValueError for a file that is none of the three."""
    name = path.name
    if name.endswith(LOG_SUFFIX):
        return dump_log_file(path, print_data_log)
    if name.endswith(TIME_INDEX_SUFFIX):
        return dump_time_index_file(path)
    if name.endswith(INDEX_SUFFIX):
        return dump_index_file(path)
    if name.endswith(TXN_INDEX_SUFFIX):
        return dump_txn_index_file(path)
    raise ValueError(f"{path}: expected a .log, .index, .timeindex or .txnindex file")


@dataclass(frozen=True)
class PartitionSummary:
    topic: str
    partition: int
    log_start_offset: int
    log_end_offset: int
    segments: int
    size: int


def _log_end_offset(segment: Path) -> int | None:
    """Next offset after the last whole batch of a segment, None when it has none."""
    end = None
    for batch in scan_batches(segment.read_bytes()):
        if not batch.whole:
            break
        end = batch.header.next_offset
    return end


def log_start_offset(directory: Path, first_base: int) -> int:
    """The log start offset as the broker loads it, before capping at the log end offset: its
    checkpoint, or the first segment's base offset when that is later."""
    return max(read_checkpoint(directory / LOG_START_OFFSET_FILE) or 0, first_base)


def summarize_partition(directory: Path, topic: str, partition: int) -> PartitionSummary:
    segments = segment_paths(directory)
    bases = [_base_offset(s, LOG_SUFFIX) for s in segments]
    size = sum(s.stat().st_size for s in segments)
    end = 0
    for segment, base in zip(reversed(segments), reversed(bases)):
        found = _log_end_offset(segment)
        if found is not None:
            end = found
            break
        end = max(end, base)
    if segments:
        end = max(end, bases[-1])
    start = min(log_start_offset(directory, bases[0] if bases else 0), end)
    # A partition never written has no files yet, but one (empty) segment, as the broker sees it.
    return PartitionSummary(topic, partition, start, end, max(len(segments), 1), size)


def _snapshot_open_txns(directory: Path, log_end_offset: int) -> tuple[int, dict[int, int]]:
    """(offset, open transactions) of the newest readable producer-state snapshot at or below
    the log end offset; (0, {}) when there is none."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        names = []
    offsets = sorted(o for n in names if (o := parse_offset_filename(n, SNAPSHOT_SUFFIX)) is not None)
    for offset in reversed(offsets):
        if offset > log_end_offset:
            continue
        try:
            producers = read_snapshot(directory / offset_filename(offset, SNAPSHOT_SUFFIX), offset)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        return offset, {pid: e.current_txn_first_offset for pid, e in producers.items() if e.current_txn_first_offset >= 0}
    return 0, {}


def last_stable_offset(directory: Path, log_end_offset: int) -> int:
    """The partition's last stable offset, read from its files: the first offset of the oldest
    transaction without a marker, else the log end offset. Starts from the newest producer-state
    snapshot, as the broker does, and reads only the segments after it."""
    start, open_txns = _snapshot_open_txns(directory, log_end_offset)
    segments = segment_paths(directory)
    later = [i for i, p in enumerate(segments) if _base_offset(p, LOG_SUFFIX) > start]
    first = max((later[0] - 1) if later else len(segments) - 1, 0)
    for segment in segments[first:]:
        for batch in scan_batches(segment.read_bytes()):
            header = batch.header
            if not batch.whole or batch.problem:
                break
            if header.base_offset < start:
                continue
            if header.is_control:
                open_txns.pop(header.producer_id, None)
            elif header.is_transactional:
                open_txns.setdefault(header.producer_id, header.base_offset)
    return min([log_end_offset, *open_txns.values()])


def describe_data_dir(data_dir: Path, topics: Iterable[TopicMetadata] | None = None) -> list[PartitionSummary]:
    """Every partition of every topic, by topic and partition. `topics`: what the broker's
    metadata log has (the offline CLI reads it there); without them, the topics/ files of a
    data dir kept by the storage layer alone."""
    summaries = []
    for metadata in (read_topics(data_dir).topics if topics is None else topics):
        for partition in range(metadata.partitions):
            directory = partition_dir(data_dir, metadata.name, partition)
            summaries.append(summarize_partition(directory, metadata.name, partition))
    return sorted(summaries, key=lambda s: (s.topic, s.partition))


def topic_segments(data_dir: Path, topic: str) -> Iterator[tuple[int, int, list[Path]]]:
    """(partition, log start offset, segment files by base offset) of each partition directory
    of `topic`, by partition: what replaying an internal topic from the files reads."""
    named = sorted(found for entry in os.scandir(data_dir)
                   if entry.is_dir() and (found := parse_partition_dir(entry.name)) and found[0] == topic)
    for _, partition in named:
        directory = partition_dir(data_dir, topic, partition)
        segments = segment_paths(directory)
        yield partition, log_start_offset(directory, _base_offset(segments[0], LOG_SUFFIX) if segments else 0), segments


def replay_topic(data_dir: Path, topic: str,
                 entries: Callable[[bytes, int, int], Generator[T, None, int]]) -> Iterator[T]:
    """What `entries(segment bytes, offset, partition)` yields for each segment of each partition
    of `topic` in order, from the log start offset on; `entries` returns the offset after the last
    batch it read. A partition stops at its first unreadable batch."""
    for partition, offset, segments in topic_segments(data_dir, topic):
        for segment in segments:
            try:
                offset = yield from entries(segment.read_bytes(), offset, partition)
            except rec.CorruptRecordError:
                break
