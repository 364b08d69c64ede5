"""LogCleaner on a ManualClock: latest record per key, offsets kept, tombstones, lags, codecs, crashes."""

import pytest
from testkit.storage import crash

from trafka.storage.cleaner import LogCleaner, cleanable_range
from trafka.storage.segment_swap import new_cleaned_segment, replace_segments
from trafka.wire import records as rec
from trafka.wire.records import Compression, Record, encode_batch

COMPACT = {"cleanup_policy": "compact", "min_cleanable_dirty_ratio": "0.01", "delete_retention_ms": "10000"}


def put(log, clock, key, value, **kwargs):
    info = log.append(encode_batch([Record(key, value, timestamp=clock.time_ms())], **kwargs))
    clock.advance(10)
    return info.base_offset


def contents(log):
    """(offset, key, value) of every record in the log, in order."""
    out = []
    for segment in log.segments:
        for pos, header in segment.batches_from(segment.base_offset):
            out += [(r.offset, r.key, r.value) for r in rec.decode_records(segment.pread(pos, header.size))]
    return out


def test_keeps_the_latest_record_per_key_with_offsets_unchanged(open_log, clock):
    log = open_log(**COMPACT)
    for i in range(9):
        put(log, clock, b"k%d" % (i % 3), b"v%d" % i)
    log.roll()
    put(log, clock, b"k0", b"active")  # the active segment is never cleaned
    LogCleaner().clean_logs([log], clock.time_ms())
    assert contents(log) == [(6, b"k0", b"v6"), (7, b"k1", b"v7"), (8, b"k2", b"v8"), (9, b"k0", b"active")]
    assert log.log_start_offset == 0 and log.log_end_offset == 10
    assert [r.offset for r in rec.decode_records(log.read(0, 1 << 20).to_bytes())] == [6]
    log.close()
    reopened = open_log(**COMPACT)
    assert contents(reopened) == [(6, b"k0", b"v6"), (7, b"k1", b"v7"), (8, b"k2", b"v8"), (9, b"k0", b"active")]


def test_a_second_pass_dedupes_the_clean_part_against_new_dirty_records(open_log, clock):
    log = open_log(**COMPACT)
    cleaner = LogCleaner()
    put(log, clock, b"a", b"1")
    put(log, clock, b"b", b"1")
    log.roll()
    cleaner.clean_logs([log], clock.time_ms())
    assert cleanable_range(log, clock.time_ms()).first_dirty_offset == 2
    put(log, clock, b"a", b"2")
    log.roll()
    cleaner.clean_logs([log], clock.time_ms())
    assert contents(log) == [(1, b"b", b"1"), (2, b"a", b"2")]


def test_tombstones_stay_for_delete_retention_ms_then_go(open_log, clock):
    log = open_log(**COMPACT)
    cleaner = LogCleaner()
    put(log, clock, b"a", b"1")
    put(log, clock, b"b", b"1")
    put(log, clock, b"a", None)
    log.roll()
    cleaner.clean_logs([log], clock.time_ms())
    assert contents(log) == [(1, b"b", b"1"), (2, b"a", None)]
    clock.advance(5000)
    assert cleaner.clean_logs([log], clock.time_ms()) == {}  # nothing dirty, tombstone still young
    clock.advance(6000)
    assert cleaner.clean_logs([log], clock.time_ms())  # the tombstone's deadline makes it cleanable
    assert contents(log) == [(1, b"b", b"1")]


def test_min_cleanable_dirty_ratio(open_log, clock):
    log = open_log(cleanup_policy="compact", min_cleanable_dirty_ratio="0.6")
    cleaner = LogCleaner()
    for i in range(4):
        put(log, clock, b"k%d" % i, b"v")
    log.roll()
    cleaner.clean_logs([log], clock.time_ms())  # all dirty: ratio 1.0
    put(log, clock, b"k0", b"again")
    log.roll()
    assert cleanable_range(log, clock.time_ms()).dirty_ratio < 0.6
    assert cleaner.clean_logs([log], clock.time_ms()) == {}
    assert len(contents(log)) == 5


def test_max_compaction_lag_forces_a_clean_below_the_ratio(open_log, clock):
    log = open_log(cleanup_policy="compact", min_cleanable_dirty_ratio="0.9", max_compaction_lag_ms="60000")
    cleaner = LogCleaner()
    for i in range(4):
        put(log, clock, b"k%d" % i, b"v")
    log.roll()
    cleaner.clean_logs([log], clock.time_ms())
    put(log, clock, b"k0", b"again")
    log.roll()
    assert cleaner.clean_logs([log], clock.time_ms()) == {}
    clock.advance(60_001)
    assert cleaner.clean_logs([log], clock.time_ms())
    assert [c[0] for c in contents(log)] == [1, 2, 3, 4]


def test_min_compaction_lag_keeps_young_segments_dirty(open_log, clock):
    log = open_log(cleanup_policy="compact", min_cleanable_dirty_ratio="0.01", min_compaction_lag_ms="5000")
    cleaner = LogCleaner()
    put(log, clock, b"k", b"old")
    log.roll()
    clock.advance(6000)
    put(log, clock, b"k", b"young")
    log.roll()
    put(log, clock, b"k", b"active")
    cleaner.clean_logs([log], clock.time_ms())
    # Only the first segment is old enough: its key reappears later, but not within the cleaned range.
    assert [c[2] for c in contents(log)] == [b"old", b"young", b"active"]
    assert cleanable_range(log, clock.time_ms()).first_dirty_offset == 1
    clock.advance(6000)
    cleaner.clean_logs([log], clock.time_ms())
    assert [c[2] for c in contents(log)] == [b"young", b"active"]


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD])
def test_compressed_batches_keep_offsets_timestamps_headers_and_producer_fields(open_log, clock, codec):
    log = open_log(**COMPACT)
    records = [Record(b"k%d" % (i % 2), b"v%d" % i, [("h", b"%d" % i)], timestamp=clock.time_ms() + i) for i in range(5)]
    log.append(encode_batch(records, compression=codec, producer_id=7, producer_epoch=2, base_sequence=0))
    log.append(encode_batch([Record(b"k0", b"later", timestamp=clock.time_ms() + 10)], compression=codec,
                            producer_id=7, producer_epoch=2, base_sequence=5))
    log.roll()
    LogCleaner().clean_logs([log], clock.time_ms())
    data = log.read(0, 1 << 20).to_bytes()
    batches = list(rec.iter_batches(data))
    header = batches[0][1]
    assert (header.base_offset, header.last_offset_delta, header.record_count) == (0, 4, 1)
    assert (header.compression, header.producer_id, header.producer_epoch, header.base_sequence) == (codec, 7, 2, 0)
    kept = rec.decode_records(data, 0)
    assert [(r.offset, r.key, r.value, list(r.headers), r.timestamp) for r in kept] == [
        (3, b"k1", b"v3", [("h", b"3")], clock.time_ms() + 3)
    ]
    assert batches[1][1].base_offset == 5 and batches[1][1].base_sequence == 5
    # A retry of the first batch is still recognised as a duplicate after cleaning.
    again = log.append(encode_batch(records, compression=codec, producer_id=7, producer_epoch=2, base_sequence=0))
    assert again.duplicate and again.base_offset == 0


def test_small_segments_are_merged(open_log, clock):
    log = open_log(**COMPACT)
    for i in range(6):
        put(log, clock, b"k%d" % i, b"v")
        log.roll()
    put(log, clock, b"k0", b"new")
    LogCleaner().clean_logs([log], clock.time_ms())
    assert [s.base_offset for s in log.segments] == [0, 6]
    assert [c[0] for c in contents(log)] == [0, 1, 2, 3, 4, 5, 6]  # k0 at 6 is in the active segment


def test_a_crash_before_the_swap_loses_nothing(open_log, clock):
    log = open_log(**COMPACT)
    for i in range(6):
        put(log, clock, b"k", b"v%d" % i)
    log.roll()
    cleaned = new_cleaned_segment(log, 0)
    data = encode_batch([Record(b"k", b"v5", timestamp=1, offset=5)], base_offset=0, last_offset_delta=5)
    cleaned.append(data, list(rec.iter_batches(data)))
    cleaned.flush()
    cleaned.close()
    crash(log)
    reopened = open_log(**COMPACT)
    assert [c[2] for c in contents(reopened)] == [b"v%d" % i for i in range(6)]
    assert not list(reopened.directory.glob("*.cleaned"))


def test_a_crash_mid_swap_of_a_segment_whose_tail_was_compacted_away(open_log, clock):
    log = open_log(**COMPACT)
    put(log, clock, b"a", b"keep")
    log.roll()
    put(log, clock, b"b", b"gone")
    log.roll()
    put(log, clock, b"b", None)
    log.roll()
    put(log, clock, b"c", b"active")
    old = log.segments[:2]
    cleaned = new_cleaned_segment(log, 0)
    data = encode_batch([Record(b"a", b"keep", timestamp=1, offset=0)], base_offset=0)
    cleaned.append(data, list(rec.iter_batches(data)))
    # replace_segments up to the crash: end-of-range file, .swap, the old segments still live.
    real_change = cleaned.change_suffix
    cleaned.change_suffix = lambda suffix: (real_change(suffix), suffix == ".swap" and (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        replace_segments(log, cleaned, old)
    cleaned.close()
    crash(log)
    reopened = open_log(**COMPACT)
    assert contents(reopened) == [(0, b"a", b"keep"), (2, b"b", None), (3, b"c", b"active")]
    assert [s.base_offset for s in reopened.segments] == [0, 2, 3]
    assert not list(reopened.directory.glob("*.swap*"))


def test_reads_go_past_segments_the_cleaner_emptied(open_log, clock):
    """A read from the log start skips segments left without a batch reaching the offset (as
    Kafka's LocalLog.read goes to the next segment); before, it stopped there and a consumer
    from earliest got nothing at all."""
    log = open_log(segment_bytes="200", **COMPACT)
    for i in range(12):
        put(log, clock, b"k%d" % (i % 2), b"v%d" % i)
    log.roll()
    put(log, clock, b"k9", b"active")
    LogCleaner().clean_logs([log], clock.time_ms())
    assert any(s.size == 0 for s in log.segments[:-1]) or log.segments[0].next_offset > 1
    data = log.read(0, 1 << 20, partial_tail=True).to_bytes()
    offsets = [r.offset for pos, _ in rec.iter_batches(data) for r in rec.decode_records(data, pos)]
    assert offsets == [10, 11, 12]


def test_a_pass_written_beside_appends_is_swapped_in_with_them_kept(open_log, clock):
    """plan on the loop, write (the slow step, a worker thread in the broker), finish on the
    loop: appends made between write and finish stay, the cleaned part is swapped in."""
    log = open_log(**COMPACT)
    cleaner = LogCleaner()
    for i in range(6):
        put(log, clock, b"k%d" % (i % 2), b"v%d" % i)
    log.roll()
    cleaning = cleaner.plan(log, clock.time_ms())
    cleaner.write(cleaning)
    put(log, clock, b"k0", b"during")  # the loop keeps appending while the thread writes
    log.roll()
    put(log, clock, b"k1", b"after the roll")
    assert cleaner.finish(cleaning)
    cleaner.checkpoint(cleaning)
    assert contents(log) == [(4, b"k0", b"v4"), (5, b"k1", b"v5"), (6, b"k0", b"during"), (7, b"k1", b"after the roll")]
    assert not list(log.directory.glob("*.cleaned")) and not list(log.directory.glob("*.swap*"))


def test_a_pass_whose_segments_went_meanwhile_is_dropped(open_log, clock):
    """Retention (or DeleteRecords) removed the segments the pass cleaned: its copies go, the
    log is left as retention made it, and the next pass starts over."""
    log = open_log(**{**COMPACT, "cleanup_policy": "compact,delete"})
    cleaner = LogCleaner()
    for i in range(4):
        put(log, clock, b"k%d" % (i % 2), b"v%d" % i)
    log.roll()
    put(log, clock, b"k0", b"new")
    cleaning = cleaner.plan(log, clock.time_ms())
    cleaner.write(cleaning)
    log.delete_records_before(4)  # its segments below offset 4 go at once
    assert len(log.segments) == 1
    assert not cleaner.finish(cleaning)
    assert contents(log) == [(4, b"k0", b"new")]
    assert not list(log.directory.glob("*.cleaned")) and not list(log.directory.glob("*.swap*"))
