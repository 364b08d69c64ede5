"""Retention predicates over the oldest segments, on a ManualClock."""

from testkit.storage import batch

from trafka.storage.retention import apply_retention


def fill(log, clock, segments, per_segment=1):
    """`segments` closed segments of `per_segment` one-record batches, 1 s apart."""
    for _ in range(segments):
        for _ in range(per_segment):
            log.append(batch(ts=clock.time_ms()))
            clock.advance(1000)
        log.roll()


def test_age_retention_uses_the_newest_record_and_moves_log_start(open_log, clock):
    log = open_log(retention_ms=5000)
    fill(log, clock, 3, per_segment=2)  # segments of offsets 0-1, 2-3, 4-5; newest ts t+1s, t+3s, t+5s
    log.append(batch(ts=clock.time_ms()))  # active segment at 6
    assert apply_retention(log, clock.time_ms()) == 0  # newest record of the oldest: 5 s old, not > 5 s
    clock.advance(1)
    assert apply_retention(log, clock.time_ms()) == 1
    assert log.log_start_offset == 2 and log.segments[0].base_offset == 2
    clock.advance(2000)
    assert apply_retention(log, clock.time_ms()) == 1
    assert log.log_start_offset == 4


def test_the_active_segment_stays_and_an_expired_one_rolls_first(open_log, clock):
    log = open_log(retention_ms=1000)
    log.append(batch(ts=clock.time_ms()))
    log.append(batch(ts=clock.time_ms()))
    clock.advance(5000)
    assert apply_retention(log, clock.time_ms()) == 1
    assert len(log.segments) == 1 and log.active_segment.size == 0
    assert log.log_start_offset == log.log_end_offset == 2
    assert apply_retention(log, clock.time_ms()) == 0  # an empty active segment is never deleted


def test_size_retention_keeps_at_least_retention_bytes(open_log, clock):
    log = open_log()
    fill(log, clock, 4)
    segment_size = log.segments[0].size
    # Kafka's rule: a segment goes only if the partition stays at or above retention.bytes.
    log.update_config(log.config.of({"retention.bytes": str(2 * segment_size + 10), "retention.ms": "-1"}))
    assert apply_retention(log, clock.time_ms()) == 1
    log.update_config(log.config.of({"retention.bytes": str(2 * segment_size), "retention.ms": "-1"}))
    assert apply_retention(log, clock.time_ms()) == 1
    assert [s.base_offset for s in log.segments] == [2, 3, 4]
    assert log.log_start_offset == 2 and log.size_in_bytes == 2 * segment_size


def test_both_limits_apply(open_log, clock):
    log = open_log(retention_ms=2500)
    fill(log, clock, 4)
    size = log.segments[0].size
    log.update_config(log.config.of({"retention.ms": "2500", "retention.bytes": str(size)}))
    assert apply_retention(log, clock.time_ms()) == 3  # 2 by age, then 1 more by size
    assert log.log_start_offset == 3


def test_compact_only_topics_keep_old_segments(open_log, clock):
    log = open_log(retention_ms=1000, cleanup_policy="compact")
    fill(log, clock, 3)
    clock.advance(10_000)
    assert apply_retention(log, clock.time_ms()) == 0
    assert log.log_start_offset == 0


def test_segments_below_a_deleted_records_start_go(open_log, clock):
    log = open_log(retention_ms=-1)
    fill(log, clock, 3)
    log.log_start_offset = 2  # as a crash after moving it, before deleting, leaves it
    assert apply_retention(log, clock.time_ms()) == 2
    assert log.segments[0].base_offset == 2


def test_retention_survives_reopen(open_log, clock):
    log = open_log(retention_ms=1000)
    fill(log, clock, 3)
    clock.advance(1500)
    apply_retention(log, clock.time_ms())
    start = log.log_start_offset
    log.close()
    reopened = open_log(retention_ms=1000)
    assert reopened.log_start_offset == start == 3
    assert reopened.read(start, 1000).slices == []


def test_segments_roll_at_segment_ms_and_segment_bytes(open_log, clock):
    log = open_log(segment_ms=1000)
    log.append(batch(ts=clock.time_ms()))
    clock.advance(999)
    log.append(batch(ts=clock.time_ms()))
    assert len(log.segments) == 1
    clock.advance(2)
    log.append(batch(ts=clock.time_ms()))
    assert len(log.segments) == 2
    one = len(batch())
    log.update_config(log.config.of({"segment.bytes": str(2 * one)}))
    log.append(batch(ts=clock.time_ms()))
    log.append(batch(ts=clock.time_ms()))
    assert len(log.segments) == 3 and log.active_segment.base_offset == 4
