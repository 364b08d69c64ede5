"""Transaction version 2 (KIP-890 part 2) in the coordinator, in process on a manual clock over
a broker's real logs: implicit partition adds, the epoch bump of every EndTxn v5 (markers, answer,
retries), producer id rotation when the epoch is exhausted, a version 0 transaction finished
by its own rules, and the client version and ids surviving a restart (flexible records)."""

from __future__ import annotations

import pytest

from testkit.coordinators import markers, produce, reopening_broker
from trafka.broker.coordinators.group.offsets_topic import OFFSETS_TOPIC
from trafka.broker.metadata.features import TRANSACTION_VERSION, FeatureUpdate, SAFE_DOWNGRADE
from trafka.broker.coordinators.transaction.formats import TxnState, parse_txn_value
from trafka.broker.coordinators.transaction.state_topic import TRANSACTION_STATE_TOPIC
from trafka.wire import records as rec
from trafka.wire.errors import ErrorCode as E

TIMEOUT = 60000


@pytest.fixture
def open_coordinators(tmp_path, clock):
    """`open_()` starts (or restarts) a broker on the manual clock: its logs and its
    transaction coordinator."""
    with reopening_broker(tmp_path, clock, partitions=2) as reopen:
        def open_():
            broker = reopen()
            return broker.logs, broker.txn_coordinator

        yield open_


def last_state_record(logs, txns, transactional_id):
    """The raw value bytes of the id's latest `__transaction_state` record."""
    log_ = logs.log(TRANSACTION_STATE_TOPIC, txns.state_topic.partition_for(transactional_id))
    data = log_.read(log_.log_start_offset, 1 << 20).to_bytes()
    values = [r.value for pos, _ in rec.iter_batches(data) for r in rec.decode_records(data, pos)]
    return values[-1]


def test_implicit_adds_and_an_epoch_bump_per_commit_and_abort(open_coordinators):
    open_ = open_coordinators
    logs, txns = open_()
    _, pid, epoch = txns.init_producer_id("app", TIMEOUT)
    # Produce v12+: the partition joins the transaction without AddPartitionsToTxn.
    assert txns.verify_produce("app", pid, epoch, "t", 0, add=True) == E.NONE
    assert txns.verify_produce("app", pid, epoch, "t", 1) == E.INVALID_TXN_STATE  # below v12: not added
    produce(logs, pid, epoch, 0, [b"a"])
    txn = txns.describe("app")
    assert (txn.state, txn.partitions, txn.client_version) == (TxnState.ONGOING, {("t", 0)}, 2)
    assert txns.end_transaction_v2("app", pid, epoch, True) == (E.NONE, pid, epoch + 1)
    assert markers(logs, "t", 0) == [(pid, epoch + 1, rec.CONTROL_COMMIT)]
    assert logs.log("t", 0).last_stable_offset == logs.log("t", 0).high_watermark == 2
    # A retry with the epoch before the bump is answered as the commit was; the other result is not.
    assert txns.end_transaction_v2("app", pid, epoch, True) == (E.NONE, pid, epoch + 1)
    assert txns.end_transaction_v2("app", pid, epoch, False)[0] == E.INVALID_TXN_STATE
    # The same epoch as the current one is the next transaction: nothing to commit.
    assert txns.end_transaction_v2("app", pid, epoch + 1, True)[0] == E.INVALID_TXN_STATE
    # The old epoch is fenced for new work.
    assert txns.verify_produce("app", pid, epoch, "t", 0, add=True) == E.INVALID_PRODUCER_EPOCH
    # TxnOffsetCommit v5 adds the group's partition, then an abort bumps again.
    assert txns.verify_produce("app", pid, epoch + 1, OFFSETS_TOPIC, 2, add=True) == E.NONE
    assert txns.verify_produce("app", pid, epoch + 1, "t", 1, add=True) == E.NONE
    produce(logs, pid, epoch + 1, 0, [b"b"], partition=1)
    assert txns.describe("app").partitions == {(OFFSETS_TOPIC, 2), ("t", 1)}
    assert txns.end_transaction_v2("app", pid, epoch + 1, False) == (E.NONE, pid, epoch + 2)
    assert markers(logs, "t", 1) == [(pid, epoch + 2, rec.CONTROL_ABORT)]
    assert txns.describe("app").state is TxnState.COMPLETE_ABORT
    # Version 2 may abort with nothing added (the client's abort after an error).
    assert txns.end_transaction_v2("app", pid, epoch + 2, False) == (E.NONE, pid, epoch + 3)
    # Someone else's epoch or id.
    assert txns.end_transaction_v2("app", pid, epoch + 9, False)[0] == E.PRODUCER_FENCED
    assert txns.end_transaction_v2("app", pid + 1, epoch + 3, False)[0] == E.INVALID_PRODUCER_ID_MAPPING
    assert txns.end_transaction_v2("nobody", pid, epoch, False)[0] == E.INVALID_PRODUCER_ID_MAPPING
    assert txns.end_transaction_v2("", pid, epoch, False)[0] == E.INVALID_REQUEST


def test_a_version_0_transaction_is_finished_by_its_rules(open_coordinators):
    open_ = open_coordinators
    logs, txns = open_()
    _, pid, epoch = txns.init_producer_id("app", TIMEOUT)
    assert txns.add_partitions("app", pid, epoch, [("t", 0)]) == {("t", 0): E.NONE}
    assert txns.describe("app").client_version == 0
    # A later implicit add joins the open transaction without changing its version.
    assert txns.verify_produce("app", pid, epoch, "t", 1, add=True) == E.NONE
    assert txns.describe("app").client_version == 0
    assert txns.end_transaction_v2("app", pid, epoch, True) == (E.NONE, pid, epoch)  # no bump
    assert markers(logs, "t", 0) == [(pid, epoch, rec.CONTROL_COMMIT)]
    # The classic EndTxn and its retry are unchanged.
    assert txns.add_partitions("app", pid, epoch, [("t", 0)]) == {("t", 0): E.NONE}
    assert txns.end_transaction("app", pid, epoch, False) == E.NONE
    assert txns.end_transaction("app", pid, epoch, False) == E.NONE
    assert txns.describe("app").producer_epoch == epoch


def test_an_exhausted_epoch_rotates_the_producer_id(open_coordinators):
    open_ = open_coordinators
    logs, txns = open_()
    _, pid, _ = txns.init_producer_id("app", TIMEOUT)
    # Reaching epoch 32766 through 32766 transactions would take minutes: start from the last
    # usable epoch, as a long-lived producer eventually does.
    txns.describe("app").producer_epoch = 32766
    assert txns.verify_produce("app", pid, 32766, "t", 0, add=True) == E.NONE
    produce(logs, pid, 32766, 0, [b"last"])
    error, new_pid, new_epoch = txns.end_transaction_v2("app", pid, 32766, True)
    assert (error, new_epoch) == (E.NONE, 0) and new_pid != pid
    assert markers(logs, "t", 0) == [(pid, 32767, rec.CONTROL_COMMIT)]  # the old id's last epoch
    txn = txns.describe("app")
    assert (txn.producer_id, txn.previous_producer_id, txn.next_producer_id) == (new_pid, pid, -1)
    # A retry names the old id and epoch: answered with the new ones, also after a restart.
    assert txns.end_transaction_v2("app", pid, 32766, True) == (E.NONE, new_pid, 0)
    # So does an InitProducerId naming the old id at its last epoch (Kafka's isValidProducerId;
    # the last epoch is not in the record, so after a restart it is fenced, as in Kafka).
    assert txns.init_producer_id("app", TIMEOUT, pid, 32766) == (E.NONE, new_pid, 0)
    assert txns.init_producer_id("app", TIMEOUT, pid, 5)[0] == E.PRODUCER_FENCED
    logs, txns = open_()
    assert txns.end_transaction_v2("app", pid, 32766, True) == (E.NONE, new_pid, 0)
    assert txns.verify_produce("app", new_pid, 0, "t", 0, add=True) == E.NONE
    produce(logs, new_pid, 0, 0, [b"next"])
    assert txns.end_transaction_v2("app", new_pid, 0, True) == (E.NONE, new_pid, 1)


def test_the_client_version_survives_a_restart_in_flexible_records(open_coordinators):
    open_ = open_coordinators
    logs, txns = open_()
    _, pid, epoch = txns.init_producer_id("app", TIMEOUT)
    assert txns.verify_produce("app", pid, epoch, "t", 0, add=True) == E.NONE
    produce(logs, pid, epoch, 0, [b"open"])
    raw = last_state_record(logs, txns, "app")
    assert raw[:2] == b"\x00\x01"  # value version 1: transaction.version 2 is finalized
    assert parse_txn_value(raw).client_version == 2
    logs, txns = open_()  # a restart mid-transaction
    txn = txns.describe("app")
    assert (txn.state, txn.client_version, txn.partitions) == (TxnState.ONGOING, 2, {("t", 0)})
    assert txns.end_transaction_v2("app", pid, epoch, True) == (E.NONE, pid, epoch + 1)
    assert markers(logs, "t", 0) == [(pid, epoch + 1, rec.CONTROL_COMMIT)]
    # With transaction.version lowered to 0, a version 0 record is written again...
    txns.features.apply([FeatureUpdate(TRANSACTION_VERSION, 0, SAFE_DOWNGRADE)])
    _, pid2, epoch2 = txns.init_producer_id("classic", TIMEOUT)
    txns.add_partitions("classic", pid2, epoch2, [("t", 1)])
    assert last_state_record(logs, txns, "classic")[:2] == b"\x00\x00"
    # ...except for a version 2 transaction, whose record must keep its version.
    assert txns.verify_produce("app", pid, epoch + 1, "t", 0, add=True) == E.NONE
    assert last_state_record(logs, txns, "app")[:2] == b"\x00\x01"


def test_a_timed_out_version_2_transaction_is_aborted_with_two_bumps(open_coordinators, clock):
    open_ = open_coordinators
    logs, txns = open_()
    _, pid, epoch = txns.init_producer_id("app", TIMEOUT)
    assert txns.verify_produce("app", pid, epoch, "t", 0, add=True) == E.NONE
    produce(logs, pid, epoch, 0, [b"late"])
    clock.advance(TIMEOUT + 1)
    assert txns.abort_timed_out(clock.time_ms()) == ["app"]
    assert markers(logs, "t", 0) == [(pid, epoch + 2, rec.CONTROL_ABORT)]
    assert txns.describe("app").producer_epoch == epoch + 2
    # The producer's commit with its old epoch is fenced.
    assert txns.end_transaction_v2("app", pid, epoch, True)[0] == E.PRODUCER_FENCED
