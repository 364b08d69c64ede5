"""The transaction coordinator's state machine in process, on a manual clock, over a real
LogManager: states, fencing, markers, timeouts, id expiration and replay after a restart."""

from __future__ import annotations

import pytest

from testkit.coordinators import markers, produce, reopening_broker
from trafka.broker.coordinators.group.offsets import OffsetCommit
from trafka.broker.coordinators.group.offsets_topic import OFFSETS_TOPIC
from trafka.broker.coordinators.transaction.formats import TxnState
from trafka.wire import records as rec
from trafka.wire.errors import ErrorCode as E

TIMEOUT = 60000


@pytest.fixture
def open_coordinators(tmp_path, clock):
    """`open_coordinators(**settings)` starts (or restarts) a broker on the manual clock: its
    logs, group coordinator and transaction coordinator."""
    with reopening_broker(tmp_path, clock, partitions=2) as reopen:
        def open_(**settings):
            broker = reopen(**settings)
            return broker.logs, broker.group_coordinator, broker.txn_coordinator

        yield open_


def test_commit_writes_markers_and_moves_the_lso(open_coordinators):
    logs, _, txns = open_coordinators()
    error, pid, epoch = txns.init_producer_id("app", TIMEOUT)
    assert (error, epoch) == (E.NONE, 0)
    assert txns.add_partitions("app", pid, epoch, [("t", 0), ("t", 1)]) == {("t", 0): E.NONE, ("t", 1): E.NONE}
    assert txns.describe("app").state is TxnState.ONGOING
    produce(logs, pid, epoch, 0, [b"a", b"b"])
    assert logs.log("t", 0).last_stable_offset == 0 and logs.log("t", 0).high_watermark == 2
    assert txns.end_transaction("app", pid, epoch, True) == E.NONE
    assert txns.describe("app").state is TxnState.COMPLETE_COMMIT
    assert markers(logs, "t", 0) == markers(logs, "t", 1) == [(pid, epoch, rec.CONTROL_COMMIT)]
    assert logs.log("t", 0).last_stable_offset == logs.log("t", 0).high_watermark == 3
    assert txns.end_transaction("app", pid, epoch, True) == E.NONE  # a retry
    assert txns.end_transaction("app", pid, epoch, False) == E.INVALID_TXN_STATE


def test_abort_is_indexed_for_read_committed(open_coordinators):
    logs, _, txns = open_coordinators()
    _, pid, epoch = txns.init_producer_id("app", TIMEOUT)
    txns.add_partitions("app", pid, epoch, [("t", 0)])
    produce(logs, pid, epoch, 0, [b"x"])
    assert txns.end_transaction("app", pid, epoch, False) == E.NONE
    log_ = logs.log("t", 0)
    aborted = log_.collect_aborted(0, log_.last_stable_offset)
    assert [(a.producer_id, a.first_offset, a.last_offset) for a in aborted] == [(pid, 0, 1)]
    assert (log_.active_segment.txn_index.path).exists()


def test_fencing_bumps_the_epoch_and_aborts_the_open_transaction(open_coordinators):
    logs, _, txns = open_coordinators()
    _, pid, epoch = txns.init_producer_id("app", TIMEOUT)
    txns.add_partitions("app", pid, epoch, [("t", 0)])
    produce(logs, pid, epoch, 0, [b"zombie"])
    error, same_pid, new_epoch = txns.init_producer_id("app", TIMEOUT)
    assert (error, same_pid) == (E.NONE, pid) and new_epoch == epoch + 2  # fence, then the new producer's bump
    assert markers(logs, "t", 0) == [(pid, epoch + 1, rec.CONTROL_ABORT)]
    assert logs.log("t", 0).last_stable_offset == logs.log("t", 0).high_watermark
    assert txns.add_partitions("app", pid, epoch, [("t", 0)]) == {("t", 0): E.PRODUCER_FENCED}
    assert txns.add_partitions("app", pid, epoch, [("t", 0)], version_fenced=False) == {("t", 0): E.INVALID_PRODUCER_EPOCH}
    assert txns.end_transaction("app", pid, epoch, True) == E.PRODUCER_FENCED
    assert txns.verify_produce("app", pid, epoch, "t", 0) == E.INVALID_PRODUCER_EPOCH
    assert txns.add_partitions("app", pid + 1, new_epoch, [("t", 0)]) == {("t", 0): E.INVALID_PRODUCER_ID_MAPPING}


def test_init_errors_and_unknown_partitions(open_coordinators):
    _, _, txns = open_coordinators(**{"transaction.max.timeout.ms": 1000})
    assert txns.init_producer_id("app", 1001)[0] == E.INVALID_TRANSACTION_TIMEOUT
    assert txns.init_producer_id("", 1000)[0] == E.INVALID_REQUEST
    _, pid, epoch = txns.init_producer_id("app", 1000)
    assert txns.add_partitions("app", pid, epoch, [("t", 0), ("nope", 0)]) == {
        ("t", 0): E.OPERATION_NOT_ATTEMPTED, ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert txns.end_transaction("app", pid, epoch, True) == E.INVALID_TXN_STATE  # nothing open
    assert txns.verify_produce("app", pid, epoch, "t", 0) == E.INVALID_TXN_STATE  # not added
    assert txns.add_partitions("other", pid, epoch, [("t", 0)]) == {("t", 0): E.INVALID_PRODUCER_ID_MAPPING}


def test_timeout_aborts_on_the_clock(open_coordinators, clock):
    logs, _, txns = open_coordinators()
    _, pid, epoch = txns.init_producer_id("app", 5000)
    txns.add_partitions("app", pid, epoch, [("t", 0)])
    produce(logs, pid, epoch, 0, [b"slow"])
    clock.advance(5000)
    assert txns.abort_timed_out(clock.time_ms()) == []  # not past it yet
    clock.advance(1)
    assert txns.abort_timed_out(clock.time_ms()) == ["app"]
    assert txns.describe("app").state is TxnState.COMPLETE_ABORT
    assert markers(logs, "t", 0) == [(pid, epoch + 1, rec.CONTROL_ABORT)]
    assert txns.end_transaction("app", pid, epoch, True) == E.PRODUCER_FENCED
    # The timed-out producer re-initialises with its old epoch and gets the current one (KIP-588).
    assert txns.init_producer_id("app", 5000, pid, epoch) == (E.NONE, pid, epoch + 1)


def test_transactional_id_expiration(open_coordinators, clock):
    logs, groups, txns = open_coordinators(**{"transactional.id.expiration.ms": 1000})
    txns.init_producer_id("idle", TIMEOUT)
    _, pid, epoch = txns.init_producer_id("busy", TIMEOUT)
    txns.add_partitions("busy", pid, epoch, [("t", 0)])
    clock.advance(1000)
    assert txns.expire_transactional_ids(clock.time_ms()) == ["idle"]  # an open transaction keeps its id
    assert txns.describe("idle") is None
    logs, groups, txns = open_coordinators(**{"transactional.id.expiration.ms": 1000})
    assert txns.describe("idle") is None and txns.describe("busy").state is TxnState.ONGOING


def test_offsets_in_a_transaction_are_visible_on_commit_and_survive_restart(open_coordinators):
    logs, groups, txns = open_coordinators()
    _, pid, epoch = txns.init_producer_id("app", TIMEOUT)
    assert txns.add_offsets("app", pid, epoch, "g") == E.NONE
    commit = OffsetCommit("t", 0, 42, -1, "")
    assert groups.txn_commit_offsets("g", pid, epoch, -1, "", None, [commit]) == [E.NONE]
    assert groups.fetch_offsets("g", [("t", [0])]) == [("t", [(0, None)])]
    assert groups.has_pending_txn_offset("g", "t", 0)
    # A restart with the transaction open: the pending offset comes back, still pending.
    logs, groups, txns = open_coordinators()
    assert groups.has_pending_txn_offset("g", "t", 0)
    assert txns.end_transaction("app", pid, epoch, True) == E.NONE
    assert not groups.has_pending_txn_offset("g", "t", 0)
    assert groups.fetch_offsets("g", [("t", [0])])[0][1][0][1].offset == 42
    partition = groups.offsets_topic.partition_for("g")
    assert markers(logs, OFFSETS_TOPIC, partition) == [(pid, epoch, rec.CONTROL_COMMIT)]
    logs, groups, txns = open_coordinators()
    assert groups.fetch_offsets("g", [("t", [0])])[0][1][0][1].offset == 42


def test_aborted_offsets_are_dropped(open_coordinators):
    logs, groups, txns = open_coordinators()
    _, pid, epoch = txns.init_producer_id("app", TIMEOUT)
    txns.add_offsets("app", pid, epoch, "g")
    groups.txn_commit_offsets("g", pid, epoch, -1, "", None, [OffsetCommit("t", 0, 7, -1, "")])
    assert txns.end_transaction("app", pid, epoch, False) == E.NONE
    assert groups.fetch_offsets("g", [("t", [0])]) == [("t", [(0, None)])]
    logs, groups, txns = open_coordinators()
    assert groups.fetch_offsets("g", [("t", [0])]) == [("t", [(0, None)])]


def test_restart_finishes_a_commit_interrupted_after_prepare(open_coordinators):
    logs, _, txns = open_coordinators()
    _, pid, epoch = txns.init_producer_id("app", TIMEOUT)
    txns.add_partitions("app", pid, epoch, [("t", 0)])
    produce(logs, pid, epoch, 0, [b"v"])
    txn = txns.describe("app")
    # The crash window: PrepareCommit written, no marker yet.
    assert txns._transition(txn, state=TxnState.PREPARE_COMMIT) == E.NONE
    logs, _, txns = open_coordinators()
    assert txns.describe("app").state is TxnState.COMPLETE_COMMIT
    assert markers(logs, "t", 0) == [(pid, epoch, rec.CONTROL_COMMIT)]
    assert logs.log("t", 0).last_stable_offset == logs.log("t", 0).high_watermark


def test_replay_keeps_the_open_transaction_and_its_lso(open_coordinators):
    logs, _, txns = open_coordinators()
    _, pid, epoch = txns.init_producer_id("app", TIMEOUT)
    txns.add_partitions("app", pid, epoch, [("t", 0)])
    produce(logs, pid, epoch, 0, [b"open"])
    logs, _, txns = open_coordinators()
    assert txns.describe("app").state is TxnState.ONGOING
    assert txns.describe("app").partitions == {("t", 0)}
    assert logs.log("t", 0).last_stable_offset == 0
    assert txns.end_transaction("app", pid, epoch, False) == E.NONE
    assert logs.log("t", 0).last_stable_offset == 2


def test_requests_during_a_completing_transaction_get_concurrent_transactions(open_coordinators):
    """Only reachable while markers are being written (after a crash, before start-up finishes
    them, in Kafka also right after EndTxn): the state is checked before anything else."""
    _, _, txns = open_coordinators()
    _, pid, epoch = txns.init_producer_id("app", TIMEOUT)
    txns.add_partitions("app", pid, epoch, [("t", 0)])
    txns.describe("app").state = TxnState.PREPARE_COMMIT
    assert txns.add_partitions("app", pid, epoch, [("t", 1)]) == {("t", 1): E.CONCURRENT_TRANSACTIONS}
    assert txns.add_offsets("app", pid, epoch, "g") == E.CONCURRENT_TRANSACTIONS
    assert txns.end_transaction("app", pid, epoch, True) == E.CONCURRENT_TRANSACTIONS
    assert txns.init_producer_id("app", TIMEOUT)[0] == E.CONCURRENT_TRANSACTIONS


def test_a_fence_whose_abort_marker_failed_is_finished_by_the_marker_retries(open_coordinators):
    """A new producer instance fences an open transaction; the abort marker cannot be written
    (a storage fault on __consumer_offsets); the transaction stays in PrepareEpochFence until
    the marker retries (every abort-timeout check) write it, not until a restart."""
    from trafka.storage.errors import StorageWriteFailed

    logs, groups, txns = open_coordinators()
    _, pid, epoch = txns.init_producer_id("app", TIMEOUT)
    assert txns.add_offsets("app", pid, epoch, "g") == E.NONE
    disk_refuses = True

    def guard(topic, partition):
        if disk_refuses:
            raise StorageWriteFailed(f"the disk refused the write to {topic}-{partition}")
    groups.offsets_topic.append_guard = guard
    txns.init_producer_id("app", TIMEOUT)  # fences; its abort marker fails
    assert txns.describe("app").state is TxnState.PREPARE_EPOCH_FENCE
    assert txns.init_producer_id("app", TIMEOUT)[0] == E.CONCURRENT_TRANSACTIONS
    disk_refuses = False
    assert txns.retry_markers() == ["app"]
    assert txns.describe("app").state is TxnState.COMPLETE_ABORT
    partition = groups.offsets_topic.partition_for("g")
    assert markers(logs, OFFSETS_TOPIC, partition) == [(pid, epoch + 1, rec.CONTROL_ABORT)]
    error, _, new_epoch = txns.init_producer_id("app", TIMEOUT)
    assert (error, new_epoch) == (E.NONE, epoch + 2)
