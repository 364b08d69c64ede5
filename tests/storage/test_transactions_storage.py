"""Transactional data in the segment store: markers, the last stable offset, the .txnindex,
read_committed reads, recovery after kill -9, and compaction of aborted records."""

from testkit.storage import crash

from trafka.storage.cleaner import LogCleaner
from trafka.wire import records as rec
from trafka.wire.records import Record, encode_batch

COMPACT = {"cleanup_policy": "compact", "min_cleanable_dirty_ratio": "0.01", "delete_retention_ms": "10000"}
PID = 7


def txn_put(log, clock, key, value, seq, pid=PID):
    info = log.append(encode_batch([Record(key, value, timestamp=clock.time_ms())], producer_id=pid, producer_epoch=0,
                                   base_sequence=seq, transactional=True))
    clock.advance(10)
    return info.base_offset


def contents(log):
    out = []
    for segment in log.segments:
        for pos, header in segment.batches_from(segment.base_offset):
            if header.is_control:
                out.append((header.base_offset, "marker", rec.control_type(segment.pread(pos, header.size))))
            else:
                out += [(r.offset, r.key, r.value) for r in rec.decode_records(segment.pread(pos, header.size))]
    return out


def test_lso_txnindex_and_read_committed(open_log, clock):
    log = open_log()
    txn_put(log, clock, b"k", b"committed", 0)
    log.append_control(PID, 0, True, 0)
    txn_put(log, clock, b"k", b"aborted", 1)
    log.append_control(PID, 0, False, 0)
    txn_put(log, clock, b"k", b"open", 2)
    assert (log.last_stable_offset, log.high_watermark) == (4, 5)
    committed = log.read(0, 1 << 20, max_offset=log.last_stable_offset).to_bytes()
    assert [h.base_offset for _, h in rec.iter_batches(committed)] == [0, 1, 2, 3]
    assert [(a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset)
            for a in log.collect_aborted(0, log.last_stable_offset)] == [(PID, 2, 3, 4)]
    assert log.collect_aborted(4, 5) == []
    log.append_control(PID, 0, True, 0)
    assert log.last_stable_offset == log.high_watermark == 6


def test_open_transaction_and_txnindex_survive_kill_9(open_log, clock):
    log = open_log()
    txn_put(log, clock, b"k", b"aborted", 0)
    log.append_control(PID, 0, False, 0)
    txn_put(log, clock, b"k", b"open", 1)
    (log.active_segment.txn_index.path).unlink()  # lost with the page cache, say
    crash(log)
    reopened = open_log()
    assert reopened.last_stable_offset == 2
    assert [(a.first_offset, a.last_offset) for a in reopened.collect_aborted(0, 3)] == [(0, 1)]
    reopened.append_control(PID, 0, True, 0)
    assert reopened.last_stable_offset == reopened.high_watermark == 4
    reopened.close()
    again = open_log()  # a clean start, from the producer-state snapshot
    assert again.last_stable_offset == 4
    assert [(a.first_offset, a.last_offset) for a in again.collect_aborted(0, 4)] == [(0, 1)]


def test_compaction_drops_aborted_records_and_keeps_markers(open_log, clock):
    log = open_log(**COMPACT)
    log.append(encode_batch([Record(b"k", b"v1", timestamp=clock.time_ms())]))
    txn_put(log, clock, b"k", b"aborted", 0)
    log.append_control(PID, 0, False, 0)
    txn_put(log, clock, b"j", b"committed", 1)
    log.append_control(PID, 0, True, 0)
    log.roll()
    txn_put(log, clock, b"j", b"open", 2)  # not cleaned: past the last stable offset
    LogCleaner().clean_logs([log], clock.time_ms())
    assert contents(log) == [
        (0, b"k", b"v1"), (2, "marker", rec.CONTROL_ABORT), (3, b"j", b"committed"), (4, "marker", rec.CONTROL_COMMIT),
        (5, b"j", b"open"),
    ]
    assert [(a.first_offset, a.last_offset) for a in log.collect_aborted(0, 5)] == [(1, 2)]
