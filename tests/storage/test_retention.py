"""Retention predicates over the oldest segments, on a ManualClock."""

import random

import pytest

from testkit.storage import batch

from trafka.storage.retention import apply_retention
from trafka.wire import records as rec
from trafka.wire.records import Record, encode_batch


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


def test_segments_at_or_past_the_high_watermark_stay(open_log, clock):
    """A replicated partition's leader whose followers lag: only segments wholly below the high
    watermark go, however old (Kafka's deletableSegments)."""
    log = open_log(retention_ms=1000)
    fill(log, clock, 4, per_segment=2)  # segments at 0, 2, 4, 6; active at 8
    log.update_high_watermark(3)  # the replica layer: the in-sync replicas have up to 3
    clock.advance(10_000)
    assert apply_retention(log, clock.time_ms()) == 1  # 0-1 only: 2-3 ends at 4, past 3
    assert log.log_start_offset == 2 <= log.high_watermark
    log.update_high_watermark(8)
    assert apply_retention(log, clock.time_ms()) == 3
    assert log.log_start_offset == 8 == log.high_watermark


def _kafka_deletable(segments, high_watermark, log_start, config, now_ms, log_end):
    """The model: Kafka's three passes of deletableSegments over (base, size, newest ts)."""
    segments = list(segments)

    def run(predicate):
        while segments:
            base, size, newest = segments[0]
            nxt = segments[1][0] if len(segments) > 1 else None
            if nxt is None and size == 0:
                return
            if (nxt if nxt is not None else log_end) > high_watermark or not predicate(base, size, newest, nxt):
                return
            segments.pop(0)

    run(lambda base, size, newest, nxt: nxt is not None and nxt <= log_start)
    if config["retention.bytes"] >= 0:
        excess = [sum(s[1] for s in segments) - config["retention.bytes"]]

        def by_size(base, size, newest, nxt):
            if excess[0] - size < 0:
                return False
            excess[0] -= size
            return True
        run(by_size)
    if config["retention.ms"] >= 0:
        run(lambda base, size, newest, nxt: now_ms - newest > config["retention.ms"])
    return segments[0][0] if segments else log_end


@pytest.mark.parametrize("seed", range(40))
def test_seeded_schedules_never_move_the_log_start_past_the_high_watermark(open_log, clock, seed):
    """Appends with old and new timestamps, rolls, a high watermark the replica layer moves
    forward in jumps, retention limits that change, the clock: after every retention pass the
    log start is where Kafka's rule puts it, never past the high watermark, and every record
    from the log start on reads back."""
    rng = random.Random(seed)
    log = open_log(retention_ms=5000)
    high_watermark = 0
    log.update_high_watermark(high_watermark)  # a replicated partition's leader: nothing on every replica yet
    values: dict[int, bytes] = {}
    for step in range(150):
        action = rng.random()
        if action < 0.45:
            offset = log.log_end_offset
            old = rng.random() < 0.3
            value = b"s%d-%d" % (seed, step)
            log.append(encode_batch([Record(b"k", value, timestamp=clock.time_ms() - (60_000 if old else 0))]))
            values[offset] = value
        elif action < 0.55:
            log.roll()
        elif action < 0.7:
            high_watermark = rng.randint(high_watermark, log.log_end_offset)
            log.update_high_watermark(high_watermark)
        elif action < 0.8:
            config = {"retention.ms": rng.choice([-1, 1000, 5000]), "retention.bytes": rng.choice([-1, 200, 600])}
            log.update_config(log.config.of({k: str(v) for k, v in config.items()}))
        else:
            clock.advance(rng.choice([100, 1000, 4000]))
        if rng.random() < 0.4:
            config = {"retention.ms": log.config.retention_ms, "retention.bytes": log.config.retention_bytes}
            now = clock.time_ms()
            before = [(s.base_offset, s.size, s.max_timestamp_so_far if s.max_timestamp_so_far >= 0 else s.created_ms)
                      for s in log.segments]
            expected = _kafka_deletable(before, log.high_watermark, log.log_start_offset, config, now, log.log_end_offset)
            apply_retention(log, now)
            assert log.segments[0].base_offset == expected, (seed, step, before, log.high_watermark)
            assert log.log_start_offset <= log.high_watermark, (seed, step)
        data = log.read(log.log_start_offset, 1 << 30, replica=True).to_bytes()  # the whole log, as a follower reads it
        read = {r.offset: r.value for pos, _ in rec.iter_batches(data) for r in rec.decode_records(data, pos)}
        assert read == {o: v for o, v in values.items() if o >= log.log_start_offset}, (seed, step)
