import struct

import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from trafka.wire import records as rec
from trafka.wire.records import Compression, Record, TimestampType, encode_batch


def kafka_python_batch(codec, records, **producer):
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=codec, is_transactional=False,
        producer_id=producer.get("producer_id", -1), producer_epoch=producer.get("producer_epoch", -1),
        base_sequence=producer.get("base_sequence", -1), batch_size=1 << 20,
    )
    for offset, (key, value, ts, headers) in enumerate(records):
        builder.append(offset, timestamp=ts, key=key, value=value, headers=headers)
    return bytes(builder.build())


SAMPLE = [
    (b"key-0", b"value " * 50, 1_700_000_000_000, []),
    (None, b"no key " * 50, 1_700_000_000_005, [("h1", b"x"), ("h2", None)]),
    (b"key-2", None, 1_699_999_999_000, []),
    (b"", b"empty key " * 50, 1_700_000_000_010, [("\u00e9t\u00e9", b"\x00\xff")]),
]


def test_header_layout_matches_kafka():
    assert rec.HEADER_SIZE == 61
    assert rec.CRC_OFFSET == 17 and rec.ATTRIBUTES_OFFSET == 21 and rec.RECORD_COUNT_OFFSET == 57
    assert struct.calcsize(">qiib") == rec.CRC_OFFSET


@pytest.mark.parametrize(
    "codec", [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]
)
def test_decode_kafka_python_batches(codec):
    data = kafka_python_batch(int(codec), SAMPLE)
    header = rec.check_batch(data)
    assert header.compression == codec  # kafka-python keeps compression only when it pays
    assert header.record_count == 4 and header.last_offset_delta == 3
    decoded = rec.decode_records(data)
    assert [(r.key, r.value, r.timestamp, list(r.headers), r.offset) for r in decoded] == [
        (k, v, ts, h, i) for i, (k, v, ts, h) in enumerate(SAMPLE)
    ]


@pytest.mark.parametrize(
    "codec", [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]
)
def test_kafka_python_reads_our_batches(codec):
    records = [Record(k, v, h, ts) for k, v, ts, h in SAMPLE]
    data = encode_batch(records, base_offset=100, compression=codec, producer_id=7, producer_epoch=1, base_sequence=3)
    parsed = DefaultRecordBatch(data)
    assert parsed.validate_crc()
    assert parsed.compression_type == codec
    assert (parsed.producer_id, parsed.producer_epoch, parsed.base_sequence) == (7, 1, 3)
    got = [(r.offset, r.key, r.value, r.timestamp, list(r.headers)) for r in parsed]
    assert got == [(100 + i, k, v, ts, h) for i, (k, v, ts, h) in enumerate(SAMPLE)]
    assert [r.offset for r in rec.decode_records(data)] == [100, 101, 102, 103]


def test_raw_snappy_is_read_too():
    import cramjam

    body = b"".join(rec._encode_record(Record(b"k", b"v" * 100), 0, 0) for _ in range(1))
    assert rec.decompress(Compression.SNAPPY, bytes(cramjam.snappy.compress_raw(body))) == body
    assert rec.decompress(Compression.SNAPPY, rec.compress(Compression.SNAPPY, body)) == body
    assert rec.compress(Compression.SNAPPY, body).startswith(rec.XERIAL_MAGIC)


def test_iter_batches_over_concatenated_batches():
    blob = encode_batch([Record(b"a", b"1")]) + encode_batch([Record(b"b", b"2"), Record(b"c", b"3")])
    found = [(pos, h.record_count) for pos, h in rec.iter_batches(blob)]
    assert found[0] == (0, 1) and found[1][1] == 2
    with pytest.raises(rec.CorruptRecordError):
        list(rec.iter_batches(blob[:-1]))


def test_crc_magic_and_length_are_checked():
    data = bytearray(encode_batch([Record(b"a", b"1")]))
    data[-1] ^= 0xFF
    with pytest.raises(rec.CorruptRecordError, match="CRC"):
        rec.check_batch(data)
    data = bytearray(encode_batch([Record(b"a", b"1")]))
    data[rec.MAGIC_OFFSET] = 1
    with pytest.raises(rec.CorruptRecordError, match="magic"):
        rec.check_batch(data)
    data = bytearray(encode_batch([Record(b"a", b"1")]))
    struct.pack_into(">i", data, rec.BATCH_LENGTH_OFFSET, 10_000)
    with pytest.raises(rec.CorruptRecordError, match="claims"):
        rec.check_batch(data)


def test_set_base_offset_keeps_crc_valid():
    data = bytearray(encode_batch([Record(b"a", b"1"), Record(b"b", b"2")]))
    rec.set_base_offset(data, 0, 1234, partition_leader_epoch=5)
    header = rec.check_batch(data)
    assert (header.base_offset, header.last_offset, header.partition_leader_epoch) == (1234, 1235, 5)


def test_log_append_time_recomputes_crc():
    data = bytearray(encode_batch([Record(b"a", b"1", timestamp=5), Record(b"b", b"2", timestamp=9)]))
    rec.set_log_append_time(data, 0, 777)
    header = rec.check_batch(bytes(data))
    assert header.timestamp_type == TimestampType.LOG_APPEND_TIME and header.max_timestamp == 777
    assert [r.timestamp for r in rec.decode_records(data)] == [777, 777]
    assert DefaultRecordBatch(bytes(data)).validate_crc()


def test_attributes():
    attrs = rec.make_attributes(Compression.ZSTD, TimestampType.LOG_APPEND_TIME, transactional=True, control=True)
    assert attrs == 4 | 8 | 16 | 32
    assert rec.compression_of(attrs) == Compression.ZSTD
    assert rec.timestamp_type_of(attrs) == TimestampType.LOG_APPEND_TIME
    assert rec.is_transactional(attrs) and rec.is_control(attrs)
    with pytest.raises(rec.CorruptRecordError):
        rec.compression_of(7)


def test_last_sequence_wraps():
    data = encode_batch([Record(None, b"x")] * 3, producer_id=1, producer_epoch=0, base_sequence=rec.INT32_MAX - 1)
    assert rec.parse_header(data).last_sequence == 0  # MAX-1, MAX, 0


def test_cleaned_batch_keeps_offset_range():
    data = encode_batch([Record(b"k", b"v", offset=17)], base_offset=10, last_offset_delta=9)
    header = rec.check_batch(data)
    assert (header.base_offset, header.last_offset, header.record_count) == (10, 19, 1)
    assert rec.decode_records(data)[0].offset == 17
