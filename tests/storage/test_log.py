import logging
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from testkit.storage import batch, crash

from trafka.storage import (
    CorruptRecord,
    InvalidRecord,
    OffsetOutOfRange,
    RecordBatchTooLarge,
    RecordTooLarge,
)
from trafka.storage.segment_swap import new_cleaned_segment, replace_segments
from trafka.wire import records as rec
from trafka.wire.records import Record, TimestampType, encode_batch


def offsets_in(data):
    return [r.offset for _, h in rec.iter_batches(data) for r in rec.decode_records(data, _)]


def values_in(data):
    return [r.value for pos, _ in rec.iter_batches(data) for r in rec.decode_records(data, pos)]


def test_append_read_round_trip(open_log):
    log = open_log()
    sent = encode_batch([Record(b"a", b"1", timestamp=5), Record(None, b"2", [("h", b"x")], timestamp=6)])
    info = log.append(sent)
    assert (info.base_offset, info.last_offset, info.log_append_time, info.record_count) == (0, 1, -1, 2)
    assert log.log_end_offset == log.high_watermark == 2
    data = log.read(0, 1 << 20).to_bytes()
    (header,) = [h for _, h in rec.iter_batches(data)]
    assert header.base_offset == 0 and header.partition_leader_epoch == 0
    assert [(r.key, r.value, list(r.headers)) for r in rec.decode_records(data)] == [
        (b"a", b"1", []), (None, b"2", [("h", b"x")])
    ]
    # the client's bytes are kept as they were, apart from the offset and leader epoch
    assert data[rec.MAGIC_OFFSET :] == sent[rec.MAGIC_OFFSET :]


def test_offsets_contiguous_across_batches_and_segments(open_log):
    log = open_log(segment_bytes=1000)
    for i in range(30):
        blob = batch(3, value_size=20) + batch(2, value_size=20)  # two batches in one request
        info = log.append(blob)
        assert (info.base_offset, info.last_offset) == (i * 5, i * 5 + 4)
    assert len(log.segments) > 5
    assert offsets_in(log.read(0, 1 << 30).to_bytes()) == list(range(150))
    for segment, following in zip(log.segments, log.segments[1:]):
        assert segment.next_offset == following.base_offset
        assert segment.size <= 1000
        assert segment.log_path.name == f"{segment.base_offset:020d}.log"


def test_read_returns_whole_batches_from_the_one_holding_the_offset(open_log):
    log = open_log()
    for _ in range(10):
        log.append(batch(4, value_size=100))
    data = log.read(6, 1).to_bytes()  # inside the second batch; max_bytes smaller than a batch
    assert offsets_in(data) == [4, 5, 6, 7]
    one_batch = len(data)
    data = log.read(6, one_batch * 3 - 1).to_bytes()
    assert offsets_in(data) == list(range(4, 12))
    assert log.read(6, 1, min_one_batch=False).slices == []
    assert log.read(40, 100).slices == []  # at the high watermark: nothing yet, no error


def test_read_across_segments_respects_max_bytes(open_log):
    log = open_log(segment_bytes=600)
    for _ in range(20):
        log.append(batch(1, value_size=200))
    size = len(batch(1, value_size=200))
    info = log.read(1, size * 5)
    assert len(info.slices) >= 2
    assert offsets_in(info.to_bytes()) == [1, 2, 3, 4, 5]
    assert info.size == size * 5


def test_offset_out_of_range(open_log):
    log = open_log()
    log.append(batch(3))
    with pytest.raises(OffsetOutOfRange) as exc:
        log.read(4, 100)
    assert (exc.value.log_start_offset, exc.value.log_end_offset) == (0, 3)
    log.delete_records_before(2)
    with pytest.raises(OffsetOutOfRange):
        log.read(1, 100)
    assert offsets_in(log.read(2, 100).to_bytes()) == [0, 1, 2]  # whole batch; clients skip below


def test_roll_by_bytes_and_by_time(open_log, clock):
    log = open_log(segment_bytes=10_000, segment_ms=60_000)
    log.append(batch(1, ts=clock.time_ms()))
    clock.advance(30_000)
    log.append(batch(1, ts=clock.time_ms()))
    assert len(log.segments) == 1
    clock.advance(30_001)
    info = log.append(batch(1, ts=clock.time_ms()))
    assert len(log.segments) == 2 and log.active_segment.base_offset == info.base_offset == 2
    big = batch(1, value_size=6000)
    log.append(big)
    log.append(big)
    assert len(log.segments) == 3


def test_index_is_sparse_and_lookups_find_the_largest_entry_at_or_below(open_log):
    log = open_log(index_interval_bytes=500)
    size = len(batch(1, value_size=100))
    for i in range(50):
        log.append(batch(1, value_size=100, ts=1000 + i))
    segment = log.active_segment
    entries = segment.offset_index.entries()
    assert 5 < len(entries) < 50
    raw = (log.directory / f"{0:020d}.index").read_bytes()
    assert len(raw) == 8 * len(entries)
    for relative, position in entries:
        assert position == relative * size  # one record per batch: offset n sits at n * size
    offset, position = segment.offset_index.lookup(23)
    assert offset <= 23 and position == offset * size
    assert segment.offset_index.lookup(-1) == (0, 0)
    assert len((log.directory / f"{0:020d}.timeindex").read_bytes()) % 12 == 0
    assert log.offset_for_timestamp(1023).offset == 23


def test_offset_for_timestamp_and_max_timestamp(open_log):
    log = open_log(segment_bytes=400, index_interval_bytes=100)
    stamps = [100, 200, 150, 300, 300, 250, 400, 120]
    for ts in stamps:
        log.append(encode_batch([Record(b"k", b"v" * 50, timestamp=ts), Record(b"k", b"w", timestamp=ts + 1)]))
    assert len(log.segments) > 2
    assert log.offset_for_timestamp(0).offset == 0
    assert log.offset_for_timestamp(201).offset == 3  # 200 at offset 2, 201 at offset 3
    assert log.offset_for_timestamp(202).offset == 6  # first record >= 202: 300 at offset 6
    assert log.offset_for_timestamp(401).offset == 13
    assert log.offset_for_timestamp(402) is None
    best = log.max_timestamp()
    assert (best.timestamp, best.offset) == (401, 13)


def test_log_append_time(open_log, clock):
    log = open_log(message_timestamp_type="LogAppendTime")
    info = log.append(batch(3, ts=5))
    assert info.log_append_time == clock.time_ms()
    data = log.read(0, 1 << 20).to_bytes()
    header = rec.check_batch(data)  # CRC recomputed and valid
    assert header.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert header.max_timestamp == clock.time_ms()
    assert {r.timestamp for r in rec.decode_records(data)} == {clock.time_ms()}


def test_validation_rejects_bad_batches_and_writes_nothing(open_log):
    log = open_log(max_message_bytes=500, segment_bytes=2000)
    good = batch(1)
    corrupt = bytearray(good)
    corrupt[-1] ^= 1
    with pytest.raises(CorruptRecord):
        log.append(good + bytes(corrupt))
    with pytest.raises(CorruptRecord):
        log.append(good[:-3])
    with pytest.raises(RecordTooLarge):
        log.append(batch(1, value_size=600))
    with pytest.raises(RecordBatchTooLarge):
        log.append(b"".join(batch(1, value_size=300) for _ in range(6)))
    with pytest.raises(InvalidRecord):
        log.append(encode_batch([Record(b"k", b"v")], control=True))
    with pytest.raises(InvalidRecord):
        log.append(b"")
    assert log.log_end_offset == 0 and log.active_segment.size == 0


def test_compacted_topic_needs_keys(open_log):
    log = open_log(cleanup_policy="compact")
    with pytest.raises(InvalidRecord, match="key"):
        log.append(batch(1, key=None))
    log.append(batch(1, key=b"k"))


def test_delete_records_before_moves_log_start_and_drops_segments(open_log):
    log = open_log(segment_bytes=300)
    for _ in range(20):
        log.append(batch(1, value_size=100))
    count = len(log.segments)
    assert log.delete_records_before(7) == 7
    assert log.log_start_offset == 7
    assert all(s.next_offset > 7 for s in log.segments) and len(log.segments) < count
    assert not (log.directory / f"{0:020d}.log").exists()
    assert log.delete_records_before(3) == 7  # never moves back
    with pytest.raises(OffsetOutOfRange):
        log.delete_records_before(21)
    assert log.delete_records_before(20) == 20  # everything: an empty active segment remains
    assert log.log_end_offset == 20 and log.read(20, 100).slices == []
    log.close()
    reopened = open_log()
    assert (reopened.log_start_offset, reopened.log_end_offset) == (20, 20)
    assert reopened.append(batch(1)).base_offset == 20


def test_retention_style_predicate_can_delete_the_active_segment(open_log):
    log = open_log()
    log.append(batch(5))
    assert log.delete_old_segments(lambda segment, _next: True, reason="test") == 1
    assert log.log_start_offset == log.log_end_offset == 5 and len(log.segments) == 1


def test_reopen_after_clean_close_keeps_everything(open_log, caplog):
    log = open_log(segment_bytes=500)
    for _ in range(20):
        log.append(batch(2, value_size=50))
    expected = log.read(0, 1 << 20).to_bytes()
    log.close()
    assert (log.directory / ".kafka_cleanshutdown").exists()
    with caplog.at_level(logging.INFO, logger="trafka.storage"):
        reopened = open_log(segment_bytes=500)
    assert not any("rebuilt" in m or "truncated" in m for m in caplog.messages)
    assert not (log.directory / ".kafka_cleanshutdown").exists()
    assert reopened.log_end_offset == 40
    assert reopened.read(0, 1 << 20).to_bytes() == expected
    assert reopened.append(batch(1)).base_offset == 40


def test_torn_tail_is_truncated_to_the_last_whole_batch(open_log, caplog):
    log = open_log()
    for _ in range(5):
        log.append(batch(2, value_size=100))
    size = log.active_segment.size
    one = size // 5
    path = log.active_segment.log_path
    crash(log)
    os.truncate(path, size - one // 2)  # half of the last batch made it to disk
    with caplog.at_level(logging.INFO, logger="trafka.storage"):
        reopened = open_log()
    assert reopened.log_end_offset == 8
    assert offsets_in(reopened.read(0, 1 << 20).to_bytes()) == list(range(8))
    assert os.path.getsize(path) == 4 * one
    assert any(f"truncated {one - one // 2} bytes" in m for m in caplog.messages)
    assert reopened.append(batch(1)).base_offset == 8


def test_torn_tail_is_found_even_after_a_clean_close(open_log, caplog):
    log = open_log()
    for _ in range(3):
        log.append(batch(1))
    path = log.active_segment.log_path
    log.close()
    with open(path, "ab") as f:
        f.write(batch(1)[:30])
    with caplog.at_level(logging.INFO, logger="trafka.storage"):
        reopened = open_log()
    assert reopened.log_end_offset == 3
    assert any("truncated 30 bytes" in m for m in caplog.messages)


def test_corrupt_crc_in_the_tail_truncates_there(open_log, caplog):
    log = open_log()
    for _ in range(6):
        log.append(batch(1, value_size=40))
    one = log.active_segment.size // 6
    path = log.active_segment.log_path
    crash(log)
    with open(path, "r+b") as f:
        f.seek(4 * one + rec.HEADER_SIZE + 5)  # inside the records of the fifth batch
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))
    with caplog.at_level(logging.INFO, logger="trafka.storage"):
        reopened = open_log()
    assert reopened.log_end_offset == 4
    assert os.path.getsize(path) == 4 * one
    assert any("truncated" in m and "CRC" in m for m in caplog.messages)


def test_missing_or_corrupt_index_is_rebuilt(open_log, caplog):
    log = open_log(segment_bytes=2000, index_interval_bytes=200)
    for i in range(40):
        log.append(batch(1, value_size=60, ts=1000 + i))
    first = log.segments[0]
    index_path = first.offset_index.path
    entries = first.offset_index.entries()
    time_entries = first.time_index.entries()
    log.close()
    index_path.unlink()
    (log.directory / f"{log.segments[1].base_offset:020d}.timeindex").write_bytes(b"\x00" * 7)
    with caplog.at_level(logging.INFO, logger="trafka.storage"):
        reopened = open_log(segment_bytes=2000, index_interval_bytes=200)
    assert reopened.segments[0].offset_index.entries() == entries
    assert reopened.segments[0].time_index.entries() == time_entries
    assert index_path.exists() and len(index_path.read_bytes()) == 8 * len(entries)
    assert sum("rebuilt index" in m for m in caplog.messages) == 2
    assert offsets_in(reopened.read(0, 1 << 20).to_bytes()) == list(range(40))
    assert reopened.offset_for_timestamp(1030).offset == 30


def test_unclean_shutdown_recovers_from_the_recovery_point(open_log, caplog):
    log = open_log(segment_bytes=500)
    for _ in range(20):
        log.append(batch(1, value_size=100))
    segments = len(log.segments)
    crash(log)
    with caplog.at_level(logging.INFO, logger="trafka.storage"):
        reopened = open_log(segment_bytes=500)
    # rolled segments were flushed at roll; only the active one is rescanned
    assert sum("rebuilt index" in m for m in caplog.messages) == 1
    assert len(reopened.segments) == segments and reopened.log_end_offset == 20


def test_flush_messages_policy_advances_the_recovery_point(open_log):
    log = open_log(flush_messages=3)
    recovery_point = log.directory / "recovery-point"
    log.append(batch(1))
    log.append(batch(1))
    assert not recovery_point.exists()  # default-like: nothing fsynced yet
    log.append(batch(1))
    assert recovery_point.read_text().strip() == "3"


def test_flush_ms_policy(open_log, clock):
    log = open_log(flush_ms=1000)
    log.append(batch(1))
    assert not (log.directory / "recovery-point").exists()
    clock.advance(1000)
    log.append(batch(1))
    assert (log.directory / "recovery-point").read_text().strip() == "2"


def test_compaction_can_swap_in_a_cleaned_segment(open_log):
    log = open_log(segment_bytes=400)
    for i in range(12):
        log.append(encode_batch([Record(b"k%d" % (i % 2), b"v%d" % i, timestamp=i)]))
    old = log.segments[:-1]
    kept = {}
    for segment in old:
        for pos, header in segment.batches_from(segment.base_offset):
            for record in rec.decode_records(segment.pread(pos, header.size)):
                kept[record.key] = record
    cleaned = new_cleaned_segment(log, old[0].base_offset)
    records = sorted(kept.values(), key=lambda r: r.offset)
    data = encode_batch(records, base_offset=old[0].base_offset, last_offset_delta=old[-1].last_offset - old[0].base_offset)
    cleaned.append(data, list(rec.iter_batches(data)))
    replace_segments(log, cleaned, old)
    assert [s.base_offset for s in log.segments][0] == 0 and len(log.segments) == 2
    remaining = log.read(0, 1 << 20).to_bytes()
    assert [r.offset for r in rec.decode_records(remaining)] == [r.offset for r in records]
    log.close()
    reopened = open_log(segment_bytes=400)
    assert values_in(reopened.read(0, 1 << 20).to_bytes())[: len(records)] == [r.value for r in records]
    assert reopened.log_end_offset == 12


def test_an_interrupted_swap_is_completed_on_open(open_log):
    log = open_log(segment_bytes=300)
    for i in range(6):
        log.append(encode_batch([Record(b"k", b"v%d" % i * 30, timestamp=i)]))
    old = log.segments[:-1]
    last = old[-1].last_offset
    cleaned = new_cleaned_segment(log, 0)
    data = encode_batch([Record(b"k", b"latest", timestamp=9, offset=last)], base_offset=0, last_offset_delta=last)
    cleaned.append(data, list(rec.iter_batches(data)))
    cleaned.flush()
    cleaned.change_suffix(".swap")  # the crash comes before the old segments are deleted
    cleaned.close()
    crash(log)
    reopened = open_log(segment_bytes=300)
    assert reopened.segments[0].base_offset == 0 and len(reopened.segments) == 2
    assert values_in(reopened.read(0, 1 << 20).to_bytes())[0] == b"latest"
    assert not list(reopened.directory.glob("*.swap"))
    assert reopened.log_end_offset == 6


def test_appended_data_survives_sigkill(tmp_path, open_log):
    script = textwrap.dedent(
        f"""
        import os, signal
        from trafka.storage import PartitionLog, LogConfig
        from trafka.wire.records import Record, encode_batch
        log = PartitionLog({str(tmp_path / "t-0")!r}, LogConfig.of({{"segment.bytes": "2000"}}))
        for i in range(50):
            log.append(encode_batch([Record(b"k", b"value-%d" % i * 10, timestamp=i)]))
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    result = subprocess.run([sys.executable, "-c", script])
    assert result.returncode == -signal.SIGKILL
    reopened = open_log(segment_bytes=2000)
    assert reopened.log_end_offset == 50
    assert values_in(reopened.read(0, 1 << 20).to_bytes())[:50] == [b"value-%d" % i * 10 for i in range(50)]


def test_a_roll_leaves_its_fsync_to_flush_rolled_when_told(tmp_path, clock):
    """With on_roll (the broker's), a roll only starts the new segment; the rolled segment's
    fsync, its producer-state snapshot and the recovery point wait for flush_rolled, which the
    broker runs in a worker thread."""
    from trafka.storage import LogConfig, PartitionLog
    from trafka.storage.log import RECOVERY_POINT_FILE

    told = []
    log = PartitionLog(tmp_path / "t-0", LogConfig.of(), clock=clock, on_roll=told.append)
    log.append(batch(3))
    log.roll()
    assert told == [log] and log.active_segment.base_offset == 3
    assert not (log.directory / RECOVERY_POINT_FILE).exists()
    assert not list(log.directory.glob("*.snapshot"))
    log.append(batch(2))  # appends go on meanwhile
    log.flush_rolled()
    assert (log.directory / RECOVERY_POINT_FILE).read_text() == "3\n"
    assert [p.name for p in log.directory.glob("*.snapshot")] == ["00000000000000000003.snapshot"]
    log.close()
