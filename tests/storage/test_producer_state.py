import pytest
from testkit.storage import batch, crash, idempotent

from trafka.storage import InvalidProducerEpoch, OutOfOrderSequence
from trafka.wire import records as rec


def test_in_sequence_batches_append(open_log):
    log = open_log()
    assert log.append(idempotent(1, 0, 0, n=3)).base_offset == 0
    assert log.append(idempotent(1, 0, 3, n=2)).base_offset == 3
    assert log.append(idempotent(2, 0, 0)).base_offset == 5  # producers are independent
    assert log.log_end_offset == 6


def test_duplicate_of_any_of_the_last_five_returns_the_original_offsets(open_log):
    log = open_log()
    log.append(batch(1))  # a non-idempotent record first, so offsets differ from sequences
    originals = [log.append(idempotent(7, 0, seq * 2, n=2)) for seq in range(6)]
    size = log.active_segment.size
    for original in originals[1:]:
        retry = log.append(idempotent(7, 0, (original.base_offset - 1), n=2))
        assert retry.duplicate
        assert (retry.base_offset, retry.last_offset) == (original.base_offset, original.last_offset)
    assert log.active_segment.size == size and log.log_end_offset == 13
    # the oldest of six is no longer remembered: it is out of sequence, not a duplicate
    with pytest.raises(OutOfOrderSequence):
        log.append(idempotent(7, 0, 0, n=2))


def test_sequence_gap_is_out_of_order(open_log):
    log = open_log()
    log.append(idempotent(1, 0, 0, n=2))
    with pytest.raises(OutOfOrderSequence):
        log.append(idempotent(1, 0, 3))
    assert log.log_end_offset == 2
    log.append(idempotent(1, 0, 2))


def test_new_epoch_must_start_at_zero_and_stale_epoch_is_fenced(open_log):
    log = open_log()
    log.append(idempotent(1, 0, 0, n=5))
    with pytest.raises(OutOfOrderSequence, match="not 0"):
        log.append(idempotent(1, 1, 5))
    log.append(idempotent(1, 1, 0))
    with pytest.raises(InvalidProducerEpoch):
        log.append(idempotent(1, 0, 5))
    assert log.log_end_offset == 6


def test_unknown_producer_may_start_at_any_sequence(open_log):
    # Kafka accepts this: the producer's earlier batches may have been deleted by retention.
    log = open_log()
    assert log.append(idempotent(9, 3, 42)).base_offset == 0
    with pytest.raises(OutOfOrderSequence):
        log.append(idempotent(9, 3, 44))


def test_sequence_wraps_at_int32_max(open_log):
    log = open_log()
    log.append(idempotent(1, 0, rec.INT32_MAX - 1, n=2))  # sequences INT32_MAX - 1, INT32_MAX
    assert log.append(idempotent(1, 0, 0)).base_offset == 2  # then 0, as Kafka wraps
    entry = log.producer_state.producers[1]
    assert [(b.first_seq, b.last_seq) for b in entry.batches][-2:] == [(rec.INT32_MAX - 1, rec.INT32_MAX), (0, 0)]
    assert log.append(idempotent(1, 0, 0)).duplicate  # a retry after the wrap is recognised
    with pytest.raises(OutOfOrderSequence):
        log.append(idempotent(1, 0, 2))  # 1 is missing
    assert log.append(idempotent(1, 0, 1)).base_offset == 3


def test_a_request_with_several_batches_is_checked_as_a_whole(open_log):
    log = open_log()
    with pytest.raises(OutOfOrderSequence):
        log.append(idempotent(1, 0, 0, n=2) + idempotent(1, 0, 5))
    assert log.log_end_offset == 0
    log.append(idempotent(1, 0, 0, n=2) + idempotent(1, 0, 2))
    assert log.append(idempotent(1, 0, 2)).duplicate


@pytest.mark.parametrize("how", ["close", "crash", "crash-without-snapshots"])
def test_producer_state_survives_reopen(open_log, how):
    log = open_log(segment_bytes=300)
    for seq in range(10):
        log.append(idempotent(5, 2, seq, value_size=60))
    assert len(log.segments) > 2
    if how == "close":
        log.close()
    else:
        crash(log)
        if how == "crash-without-snapshots":
            for snapshot in log.directory.glob("*.snapshot"):
                snapshot.unlink()
    reopened = open_log(segment_bytes=300)
    retry = reopened.append(idempotent(5, 2, 9, value_size=60))
    assert retry.duplicate and retry.base_offset == 9
    with pytest.raises(OutOfOrderSequence):
        reopened.append(idempotent(5, 2, 11))
    with pytest.raises(InvalidProducerEpoch):
        reopened.append(idempotent(5, 1, 0))
    assert reopened.append(idempotent(5, 2, 10)).base_offset == 10


def test_snapshots_are_written_at_roll_and_close(open_log):
    log = open_log(segment_bytes=300)
    for seq in range(10):
        log.append(idempotent(5, 0, seq, value_size=60))
    assert list(log.directory.glob("*.snapshot"))
    log.close()
    snapshots = sorted(p.name for p in log.directory.glob("*.snapshot"))
    assert snapshots[-1] == f"{10:020d}.snapshot" and len(snapshots) <= 2


def test_producers_below_the_log_start_are_forgotten(open_log):
    log = open_log()
    log.append(idempotent(1, 0, 0))
    log.append(batch(1))
    log.delete_records_before(2)
    assert log.append(idempotent(1, 0, 17)).base_offset == 2
