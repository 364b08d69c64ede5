"""Record batches, magic 2: a batch is bytes plus one precompiled 61-byte header struct.

The broker keeps batches exactly as the client sent them. It rewrites header fields in place
(base offset, partition leader epoch: both outside the CRC) and only decodes the records inside
where it must look (compaction, ListOffsets by timestamp, tools). Layout, from Kafka's
DefaultRecordBatch.java:

    baseOffset i64 | batchLength i32 | partitionLeaderEpoch i32 | magic i8 | crc u32 |
    attributes i16 | lastOffsetDelta i32 | baseTimestamp i64 | maxTimestamp i64 |
    producerId i64 | producerEpoch i16 | baseSequence i32 | recordCount i32 | records...

batchLength counts the bytes after itself; the CRC-32C covers attributes to the end.
"""

from __future__ import annotations

import enum
import functools
import struct
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

import cramjam

import construct as c

from trafka.wire.types import encode_uvarint, uvarint_at

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61

BASE_OFFSET_OFFSET = 0
BATCH_LENGTH_OFFSET = 8
PARTITION_LEADER_EPOCH_OFFSET = 12
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
LAST_OFFSET_DELTA_OFFSET = 23
BASE_TIMESTAMP_OFFSET = 27
MAX_TIMESTAMP_OFFSET = 35
PRODUCER_ID_OFFSET = 43
PRODUCER_EPOCH_OFFSET = 51
BASE_SEQUENCE_OFFSET = 53
RECORD_COUNT_OFFSET = 57
RECORDS_OFFSET = HEADER_SIZE

# baseOffset and batchLength: the part of a batch not counted by batchLength ("LOG_OVERHEAD").
LOG_OVERHEAD = BATCH_LENGTH_OFFSET + 4
MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD

MAGIC = 2
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
NO_PARTITION_LEADER_EPOCH = -1
INT32_MAX = 2**31 - 1

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")
_INT64 = struct.Struct(">q")


class Compression(enum.IntEnum):
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class TimestampType(enum.IntEnum):
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20


class CorruptRecordError(ValueError):
    """The bytes are not a valid magic-2 record batch (or the records inside do not decode)."""


def compression_of(attributes: int) -> Compression:
    try:
        return Compression(attributes & COMPRESSION_MASK)
    except ValueError:
        raise CorruptRecordError(f"unknown compression codec {attributes & COMPRESSION_MASK}") from None


def timestamp_type_of(attributes: int) -> TimestampType:
    return TimestampType.LOG_APPEND_TIME if attributes & TIMESTAMP_TYPE_MASK else TimestampType.CREATE_TIME


def is_transactional(attributes: int) -> bool:
    return bool(attributes & TRANSACTIONAL_MASK)


def is_control(attributes: int) -> bool:
    return bool(attributes & CONTROL_MASK)


def make_attributes(
    compression: Compression = Compression.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    transactional: bool = False,
    control: bool = False,
) -> int:
    return (
        int(compression)
        | (TIMESTAMP_TYPE_MASK if timestamp_type == TimestampType.LOG_APPEND_TIME else 0)
        | (TRANSACTIONAL_MASK if transactional else 0)
        | (CONTROL_MASK if control else 0)
    )


@dataclass(frozen=True, slots=True)
class BatchHeader:
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def size(self) -> int:
        """Bytes the whole batch occupies, header included."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def compression(self) -> Compression:
        return compression_of(self.attributes)

    @property
    def timestamp_type(self) -> TimestampType:
        return timestamp_type_of(self.attributes)

    @property
    def is_transactional(self) -> bool:
        return is_transactional(self.attributes)

    @property
    def is_control(self) -> bool:
        return is_control(self.attributes)

    @property
    def last_sequence(self) -> int:
        """Sequence of the last record; sequences wrap from INT32_MAX to 0 like Kafka's."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) % (INT32_MAX + 1)


def parse_header(buf, pos: int = 0) -> BatchHeader:
    """Unpack the header at pos; checks only that 61 bytes are there."""
    if len(buf) - pos < HEADER_SIZE:
        raise CorruptRecordError(f"{len(buf) - pos} bytes at position {pos} cannot hold a batch header")
    return BatchHeader(*HEADER.unpack_from(buf, pos))


@functools.cache
def _crc32c():
    """The CRC-32C function of the crc32c package's C extension, loaded on first use and
    without the package's __init__, which reads its own package metadata and imports its
    command line (importlib.metadata, email, zipfile, argparse: ~40 ms and ~1.5 MB, paid by
    every start since the metadata log reads and writes batches). Any surprise in the
    package's layout falls back to the plain import."""
    try:
        import importlib.machinery
        import importlib.util
        import os

        package = importlib.util.find_spec("crc32c")  # finds it, runs nothing
        directory = package.submodule_search_locations[0]
        name = next(f for f in os.listdir(directory)
                    if f.startswith("_crc32c.") and f.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)))
        loader = importlib.machinery.ExtensionFileLoader("crc32c._crc32c", os.path.join(directory, name))
        module = importlib.util.module_from_spec(importlib.util.spec_from_loader("crc32c._crc32c", loader))
        loader.exec_module(module)
        function = module.crc32c
        if function(b"123456789") != 0xE3069283:  # the CRC-32C check value
            raise ImportError("unexpected crc32c extension")
        return function
    except Exception:
        import crc32c

        return crc32c.crc32c


def crc32c(data: bytes) -> int:
    """CRC-32C of `data` (unsigned)."""
    return _crc32c()(data)


def compute_crc(buf, pos: int, size: int) -> int:
    """CRC-32C over attributes..end of the batch of `size` bytes at pos, without copying."""
    with memoryview(buf) as view:
        return _crc32c()(view[pos + ATTRIBUTES_OFFSET : pos + size])


def check_batch(buf, pos: int = 0, *, available: int | None = None) -> BatchHeader:
    """Parse and validate the batch at pos: magic 2, a length that fits, a matching CRC."""
    header = parse_header(buf, pos)
    end = len(buf) if available is None else pos + available
    if header.magic != MAGIC:
        raise CorruptRecordError(f"batch at position {pos} has magic {header.magic}, only magic 2 is supported")
    if header.batch_length < MIN_BATCH_LENGTH:
        raise CorruptRecordError(f"batch at position {pos} has batchLength {header.batch_length}")
    if pos + header.size > end:
        raise CorruptRecordError(
            f"batch at position {pos} claims {header.size} bytes, only {end - pos} are there"
        )
    crc = compute_crc(buf, pos, header.size)
    if crc != header.crc:
        raise CorruptRecordError(f"batch at position {pos} has CRC {header.crc:#010x}, computed {crc:#010x}")
    return header


def iter_batches(buf, *, validate: bool = True) -> Iterator[tuple[int, BatchHeader]]:
    """Yield (position, header) for each batch in a blob of concatenated batches.

    A trailing partial batch is an error: a produce request's records must hold whole batches.
    """
    pos, end = 0, len(buf)
    while pos < end:
        if validate:
            header = check_batch(buf, pos)
        else:
            header = parse_header(buf, pos)
            if header.batch_length < MIN_BATCH_LENGTH or pos + header.size > end:
                raise CorruptRecordError(f"batch at position {pos} is truncated or has a bad length")
        yield pos, header
        pos += header.size


def fetched_batches(buf) -> Iterator[tuple[int, BatchHeader]]:
    """Yield (position, header) for each whole batch of a Fetch answer's records, each checked
    as iter_batches checks it. A last batch cut short by the answer's size limit ends the walk:
    a client drops it and fetches it again from its offset."""
    pos, end = 0, len(buf)
    while pos + HEADER_SIZE <= end:
        header = parse_header(buf, pos)
        if pos + header.size > end:
            return
        check_batch(buf, pos)
        yield pos, header
        pos += header.size


def set_base_offset(buf, pos: int, base_offset: int, partition_leader_epoch: int | None = None) -> None:
    """Assign the offset (and leader epoch) in place; both sit before the CRC'd range."""
    _INT64.pack_into(buf, pos + BASE_OFFSET_OFFSET, base_offset)
    if partition_leader_epoch is not None:
        _INT32.pack_into(buf, pos + PARTITION_LEADER_EPOCH_OFFSET, partition_leader_epoch)


def set_log_append_time(buf, pos: int, timestamp_ms: int) -> None:
    """Mark the batch LogAppendTime with maxTimestamp = timestamp_ms; both are CRC'd, so re-CRC."""
    (attributes,) = _INT16.unpack_from(buf, pos + ATTRIBUTES_OFFSET)
    _INT16.pack_into(buf, pos + ATTRIBUTES_OFFSET, attributes | TIMESTAMP_TYPE_MASK)
    _INT64.pack_into(buf, pos + MAX_TIMESTAMP_OFFSET, timestamp_ms)
    (batch_length,) = _INT32.unpack_from(buf, pos + BATCH_LENGTH_OFFSET)
    _UINT32.pack_into(buf, pos + CRC_OFFSET, compute_crc(buf, pos, batch_length + LOG_OVERHEAD))


# --- compression -------------------------------------------------------------------------

# Java's snappy codec (xerial SnappyOutputStream) frames raw snappy blocks behind this header:
# magic 0x82 "SNAPPY" 0x00, version i32, compatible version i32, then (i32 length, block)*.
XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = XERIAL_MAGIC + _INT32.pack(1) + _INT32.pack(1)
XERIAL_BLOCK_SIZE = 32 * 1024
# The snappy "framing format" stream identifier; some non-Java clients emit it.
SNAPPY_FRAMED_MAGIC = b"\xff\x06\x00\x00sNaPpY"


def _xerial_decode(data: bytes) -> bytes:
    out = bytearray()
    pos = len(XERIAL_HEADER)
    while pos < len(data):
        if pos + 4 > len(data):
            raise CorruptRecordError("xerial snappy stream ends inside a block length")
        (n,) = _INT32.unpack_from(data, pos)
        pos += 4
        if n < 0 or pos + n > len(data):
            raise CorruptRecordError("xerial snappy block runs past the end of the data")
        out += cramjam.snappy.decompress_raw(data[pos : pos + n])
        pos += n
    return bytes(out)


def decompress(codec: Compression, data) -> bytes:
    data = bytes(data)
    try:
        if codec == Compression.NONE:
            return data
        if codec == Compression.GZIP:
            return bytes(cramjam.gzip.decompress(data))
        if codec == Compression.SNAPPY:
            if data.startswith(XERIAL_MAGIC):
                return _xerial_decode(data)
            if data.startswith(SNAPPY_FRAMED_MAGIC):
                return bytes(cramjam.snappy.decompress(data))
            return bytes(cramjam.snappy.decompress_raw(data))
        if codec == Compression.LZ4:
            return bytes(cramjam.lz4.decompress(data))
        if codec == Compression.ZSTD:
            return bytes(cramjam.zstd.decompress(data))
    except cramjam.DecompressionError as exc:
        raise CorruptRecordError(f"{codec.name.lower()} data does not decompress: {exc}") from None
    raise CorruptRecordError(f"unknown compression codec {codec}")


def compress(codec: Compression, data) -> bytes:
    """Compress the way the Java client does, so every consumer can read what we write."""
    data = bytes(data)
    if codec == Compression.NONE:
        return data
    if codec == Compression.GZIP:
        return bytes(cramjam.gzip.compress(data))
    if codec == Compression.SNAPPY:
        out = bytearray(XERIAL_HEADER)
        for start in range(0, len(data), XERIAL_BLOCK_SIZE):
            block = bytes(cramjam.snappy.compress_raw(data[start : start + XERIAL_BLOCK_SIZE]))
            out += _INT32.pack(len(block)) + block
        return bytes(out)
    if codec == Compression.LZ4:
        # Java's KafkaLZ4BlockInputStream only reads frames with independent blocks.
        compressor = cramjam.lz4.Compressor(block_linked=False)
        compressor.compress(data)
        return bytes(compressor.finish())
    if codec == Compression.ZSTD:
        return bytes(cramjam.zstd.compress(data, level=3))
    raise ValueError(f"unknown compression codec {codec}")


# --- records inside a batch ----------------------------------------------------------------


@dataclass(slots=True)
class Record:
    """One record. Offsets and timestamps are absolute (base + delta) once decoded."""

    key: bytes | None
    value: bytes | None
    headers: Sequence[tuple[str, bytes | None]] = ()
    timestamp: int = 0
    offset: int | None = None


def _read_varint(buf, pos: int) -> tuple[int, int]:
    """A zigzag-encoded signed varint (record fields) through the one varint decoder."""
    if pos < len(buf):
        n = buf[pos]
        if n < 0x80:  # one byte: most lengths, deltas and counts
            return (n >> 1) ^ -(n & 1), pos + 1
    try:
        n, pos = uvarint_at(buf, pos)
    except c.StreamError:
        raise CorruptRecordError("record data ends inside a varint") from None
    except c.ExplicitError:
        raise CorruptRecordError("varint is longer than 10 bytes") from None
    return (n >> 1) ^ -(n & 1), pos


def _read_bytes(buf, pos: int) -> tuple[bytes | None, int]:
    n, pos = _read_varint(buf, pos)
    if n < 0:
        return None, pos
    if pos + n > len(buf):
        raise CorruptRecordError("record field runs past the end of the batch")
    return bytes(buf[pos : pos + n]), pos + n


def decode_records(buf, pos: int = 0) -> list[Record]:
    """Decode (decompressing if needed) every record of the batch at pos."""
    return list(iter_records(buf, pos))


def iter_records(buf, pos: int = 0) -> Iterator[Record]:
    """The records of the batch at pos one by one (a reader of a batch of thousands keeps one
    at a time; a batch found corrupt part way raises there)."""
    header = parse_header(buf, pos)
    with memoryview(buf) as view:
        body = decompress(header.compression, view[pos + RECORDS_OFFSET : pos + header.size])
    log_append_time = header.timestamp_type == TimestampType.LOG_APPEND_TIME
    cursor = 0
    for _ in range(header.record_count):
        length, cursor = _read_varint(body, cursor)
        end = cursor + length
        if length < 0 or end > len(body):
            raise CorruptRecordError("record length runs past the end of the batch")
        cursor += 1  # record attributes: unused in magic 2
        timestamp_delta, cursor = _read_varint(body, cursor)
        offset_delta, cursor = _read_varint(body, cursor)
        key, cursor = _read_bytes(body, cursor)
        value, cursor = _read_bytes(body, cursor)
        header_count, cursor = _read_varint(body, cursor)
        headers = []
        for _ in range(header_count):
            name, cursor = _read_bytes(body, cursor)
            if name is None:
                raise CorruptRecordError("record header with a null key")
            header_value, cursor = _read_bytes(body, cursor)
            headers.append((name.decode("utf-8"), header_value))
        if cursor != end:
            raise CorruptRecordError(f"record declared {length} bytes but its fields used {length - end + cursor}")
        timestamp = header.max_timestamp if log_append_time else header.base_timestamp + timestamp_delta
        yield Record(key, value, headers, timestamp, header.base_offset + offset_delta)
    if cursor != len(body):
        raise CorruptRecordError(f"{len(body) - cursor} bytes follow the last record of the batch")


# The one-byte zigzag varints (-64..63: most lengths, deltas and counts), made once.
_ZIGZAG_ONE_BYTE = {v: bytes([(v << 1) ^ (v >> 63)]) for v in range(-64, 64)}


def _zigzag(value: int) -> bytes:
    encoded = _ZIGZAG_ONE_BYTE.get(value)
    if encoded is not None:
        return encoded
    zigzag = (value << 1) ^ (value >> 63)
    if zigzag < 0x4000:  # two bytes: the lengths of most keys and values
        return bytes(((zigzag & 0x7F) | 0x80, zigzag >> 7))
    return encode_uvarint(zigzag)


def _encode_bytes(data: bytes | None) -> bytes:
    return _zigzag(-1) if data is None else _zigzag(len(data)) + bytes(data)


def _encode_record(record: Record, offset_delta: int, timestamp_delta: int) -> bytes:
    body = bytearray(b"\x00")
    body += _zigzag(timestamp_delta)
    body += _zigzag(offset_delta)
    body += _encode_bytes(record.key)
    body += _encode_bytes(record.value)
    body += _zigzag(len(record.headers))
    for name, value in record.headers:
        body += _encode_bytes(name.encode("utf-8"))
        body += _encode_bytes(value)
    return _zigzag(len(body)) + bytes(body)


def encode_batch(
    records: Iterable[Record],
    *,
    base_offset: int | None = None,
    last_offset_delta: int | None = None,
    compression: Compression = Compression.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    transactional: bool = False,
    control: bool = False,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> bytes:
    """Build one batch. Records without an offset follow the previous one (the first gets
    base_offset, default 0). last_offset_delta may exceed the records' span so a cleaned batch
    keeps its original offset range (and so its producer sequence range), as Kafka's cleaner does.
    """
    records = list(records)
    if not records:
        raise ValueError("a record batch holds at least one record")
    offsets = []
    next_offset = base_offset if base_offset is not None else (records[0].offset or 0)
    for record in records:
        offset = next_offset if record.offset is None else record.offset
        offsets.append(offset)
        next_offset = offset + 1
    base = offsets[0] if base_offset is None else base_offset
    base_timestamp = records[0].timestamp
    max_timestamp = max(r.timestamp for r in records)
    # The records go straight after room for the header: no list of each record's bytes and
    # no joined copy (a metadata batch of 5,500 records is ~1.4 MB).
    buf = bytearray(HEADER_SIZE)
    for r, off in zip(records, offsets):
        buf += _encode_record(r, off - base, r.timestamp - base_timestamp)
    if compression != Compression.NONE:
        body = compress(compression, bytes(memoryview(buf)[HEADER_SIZE:]))
        del buf[HEADER_SIZE:]
        buf += body
    if last_offset_delta is None:
        last_offset_delta = offsets[-1] - base
    attributes = make_attributes(compression, timestamp_type, transactional, control)
    return _sealed(buf, base, partition_leader_epoch, attributes, last_offset_delta, base_timestamp, max_timestamp,
                   producer_id, producer_epoch, base_sequence, len(records))


def encode_keyed_batch(entries: Sequence[tuple[bytes, bytes | None]], timestamp: int) -> bytes:
    """The batch encode_batch makes of records (key, value) with no headers, all at `timestamp`,
    at offsets from 0 (a metadata log append: 5,500 records for a CreateTopics of 5,000
    partitions), written straight into the batch without a Record per entry."""
    if not entries:
        raise ValueError("a record batch holds at least one record")
    buf = bytearray(HEADER_SIZE)
    for delta, (key, value) in enumerate(entries):
        # attributes 0, timestamp delta 0, offset delta, key, value, no headers
        body = b"\x00\x00" + _zigzag(delta) + _zigzag(len(key)) + key + (
            _ZIGZAG_ONE_BYTE[-1] if value is None else _zigzag(len(value)) + value) + b"\x00"
        buf += _zigzag(len(body))
        buf += body
    attributes = make_attributes(Compression.NONE, TimestampType.CREATE_TIME, False, False)
    return _sealed(buf, 0, NO_PARTITION_LEADER_EPOCH, attributes, len(entries) - 1, timestamp, timestamp,
                   NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_SEQUENCE, len(entries))


def _sealed(buf: bytearray, base_offset: int, partition_leader_epoch: int, attributes: int, last_offset_delta: int,
            base_timestamp: int, max_timestamp: int, producer_id: int, producer_epoch: int, base_sequence: int,
            count: int) -> bytes:
    """The batch whose records follow the room for the header in `buf`, its header and CRC written."""
    HEADER.pack_into(
        buf, 0, base_offset, len(buf) - LOG_OVERHEAD, partition_leader_epoch, MAGIC, 0, attributes,
        last_offset_delta, base_timestamp, max_timestamp, producer_id, producer_epoch, base_sequence, count,
    )
    _UINT32.pack_into(buf, CRC_OFFSET, compute_crc(buf, 0, len(buf)))
    return bytes(buf)


# --- control records (transaction markers) -------------------------------------------------

CONTROL_ABORT = 0
CONTROL_COMMIT = 1
_CONTROL_KEY = struct.Struct(">hh")  # version 0, type
_CONTROL_VALUE = struct.Struct(">hi")  # version 0, coordinator epoch


def encode_control_batch(
    producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int, timestamp: int, base_offset: int = 0
) -> bytes:
    """A transaction marker as Kafka writes it: one control record in a transactional control
    batch carrying the producer's id and epoch, no sequence."""
    record = Record(
        _CONTROL_KEY.pack(0, CONTROL_COMMIT if commit else CONTROL_ABORT),
        _CONTROL_VALUE.pack(0, coordinator_epoch),
        (),
        timestamp,
    )
    return encode_batch(
        [record], base_offset=base_offset, producer_id=producer_id, producer_epoch=producer_epoch,
        transactional=True, control=True,
    )


def control_type(buf, pos: int = 0) -> int:
    """ABORT (0) or COMMIT (1) of the control batch at pos; raises CorruptRecordError otherwise."""
    records = decode_records(buf, pos)
    if len(records) != 1 or records[0].key is None or len(records[0].key) < _CONTROL_KEY.size:
        raise CorruptRecordError("a control batch holds one record with a 4-byte key")
    _, kind = _CONTROL_KEY.unpack_from(records[0].key)
    return kind


def control_coordinator_epoch(value: bytes | None) -> int:
    if value is None or len(value) < _CONTROL_VALUE.size:
        return -1
    return _CONTROL_VALUE.unpack_from(value)[1]
