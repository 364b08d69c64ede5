"""Offline, read-only views of a data directory: `trafka dump-log` and `trafka describe`.

Files are opened read-only and the data-dir lock is not taken, so both work while a broker
runs. A batch the broker is writing at that moment may be cut off at the end of the active
segment; it is reported (dump-log) or left out (describe), never "repaired".
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from trafka.storage.log import LOG_START_OFFSET_FILE
from trafka.storage.producer_state import SNAPSHOT_SUFFIX
from trafka.storage.segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX
from trafka.storage.txn_index import TXN_INDEX_SUFFIX, TransactionIndex
from trafka.wire import records as rec

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")


def _base_offset(path: Path) -> int:
    return int(path.name.split(".")[0])


@dataclass(frozen=True)
class _Batch:
    position: int
    header: rec.BatchHeader | None  # None when the bytes left cannot hold a header
    problem: str = ""  # why the batch is invalid; "" when its CRC checks out
    whole: bool = True  # False for a batch cut off at the end of the file


def _batches(data: bytes) -> Iterator[_Batch]:
    """Every batch in a .log file's bytes; stops after one that is cut off."""
    pos = 0
    while pos < len(data):
        try:
            header = rec.parse_header(data, pos)
        except rec.CorruptRecordError:
            yield _Batch(pos, None, f"{len(data) - pos} bytes at the end do not hold a batch header", whole=False)
            return
        if header.batch_length < rec.MIN_BATCH_LENGTH or pos + header.size > len(data):
            yield _Batch(pos, header, f"batch claims {header.size} bytes, {len(data) - pos} are there", whole=False)
            return
        try:
            rec.check_batch(data, pos)
            problem = ""
        except rec.CorruptRecordError as exc:
            problem = str(exc)
        yield _Batch(pos, header, problem)
        pos += header.size


def _text(data: bytes | None) -> str:
    if data is None:
        return "null"
    return data.decode("utf-8", errors="backslashreplace")


def dump_log_file(path: Path, print_data_log: bool = False) -> Iterator[str]:
    """Lines describing a .log file's batches (and records), in kafka-dump-log's spirit."""
    data = path.read_bytes()
    yield f"Dumping {path}"
    yield f"Log starting offset: {_base_offset(path)}"
    for batch in _batches(data):
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


def dump_index_file(path: Path) -> Iterator[str]:
    base = _base_offset(path)
    data = path.read_bytes()
    yield f"Dumping {path}"
    usable = len(data) - len(data) % _OFFSET_ENTRY.size
    for relative, position in _OFFSET_ENTRY.iter_unpack(data[:usable]):
        yield f"offset: {base + relative} position: {position}"
    if usable != len(data):
        yield f"{len(data) - usable} trailing bytes are not a whole entry"


def dump_time_index_file(path: Path) -> Iterator[str]:
    base = _base_offset(path)
    data = path.read_bytes()
    yield f"Dumping {path}"
    usable = len(data) - len(data) % _TIME_ENTRY.size
    for timestamp, relative in _TIME_ENTRY.iter_unpack(data[:usable]):
        yield f"timestamp: {timestamp} offset: {base + relative}"
    if usable != len(data):
        yield f"{len(data) - usable} trailing bytes are not a whole entry"


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
    for batch in _batches(segment.read_bytes()):
        if not batch.whole:
            break
        end = batch.header.next_offset
    return end


def summarize_partition(directory: Path, topic: str, partition: int) -> PartitionSummary:
    segments = sorted(directory.glob(f"*{LOG_SUFFIX}"), key=_base_offset)
    segments = [s for s in segments if s.name[: -len(LOG_SUFFIX)].isdigit()]
    size = sum(s.stat().st_size for s in segments)
    end = 0
    for segment in reversed(segments):
        found = _log_end_offset(segment)
        if found is not None:
            end = found
            break
        end = max(end, _base_offset(segment))
    if segments:
        end = max(end, _base_offset(segments[-1]))
    try:
        checkpoint = int((directory / LOG_START_OFFSET_FILE).read_text().strip())
    except (OSError, ValueError):
        checkpoint = 0
    start = min(max(checkpoint, _base_offset(segments[0]) if segments else 0), end)
    # A partition never written has no files yet, but one (empty) segment, as the broker sees it.
    return PartitionSummary(topic, partition, start, end, max(len(segments), 1), size)


def _snapshot_open_txns(directory: Path, log_end_offset: int) -> tuple[int, dict[int, int]]:
    """(offset, open transactions) of the newest readable producer-state snapshot at or below
    the log end offset; (0, {}) when there is none."""
    snapshots = sorted((p for p in directory.glob(f"*{SNAPSHOT_SUFFIX}") if p.name.split(".")[0].isdigit()),
                       key=_base_offset, reverse=True)
    for path in snapshots:
        offset = _base_offset(path)
        if offset > log_end_offset:
            continue
        try:
            body = json.loads(path.read_text())
            return offset, {p["producer_id"]: p["txn_first_offset"] for p in body["producers"]
                            if p.get("txn_first_offset", -1) >= 0}
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return 0, {}


def last_stable_offset(directory: Path, log_end_offset: int) -> int:
    """The partition's last stable offset, read from its files: the first offset of the oldest
    transaction without a marker, else the log end offset. Starts from the newest producer-state
    snapshot, as the broker does, and reads only the segments after it."""
    start, open_txns = _snapshot_open_txns(directory, log_end_offset)
    segments = sorted((p for p in directory.glob(f"*{LOG_SUFFIX}") if p.name[: -len(LOG_SUFFIX)].isdigit()),
                      key=_base_offset)
    later = [i for i, p in enumerate(segments) if _base_offset(p) > start]
    first = max((later[0] - 1) if later else len(segments) - 1, 0)
    for segment in segments[first:]:
        for batch in _batches(segment.read_bytes()):
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


def describe_data_dir(data_dir: Path) -> list[PartitionSummary]:
    """Every partition of every topic in the data dir's topic metadata, by topic and partition."""
    summaries = []
    for path in sorted((data_dir / "topics").glob("*.json")):
        metadata = json.loads(path.read_text())
        for partition in range(int(metadata["partitions"])):
            directory = data_dir / f"{metadata['name']}-{partition}"
            summaries.append(summarize_partition(directory, metadata["name"], partition))
    return sorted(summaries, key=lambda s: (s.topic, s.partition))
