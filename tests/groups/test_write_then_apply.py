"""The coordinators write first and change their state only once the write is in the log.

Each test makes the internal topic's next append fail (an injected storage fault: the disk
refuses the write, as a full disk does), sends the request, and checks that it is answered with
Kafka's error and that the coordinator believes exactly what it believed before; then that once
the fault is gone, and again after a restart, the state is what the clients were told.
The raw protocol against a real broker, so every epoch and member id can be checked exactly.
"""

from __future__ import annotations

from testkit.groups import GROUP_BROKER_CONFIG, create_topic
from tests.groups.test_consumer_group_restart import commit, committed, describe, heartbeat
from trafka.testing.broker import TrafkaBroker
from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_until
from trafka.wire import records
from trafka.wire.errors import ErrorCode

OFFSETS, TXN_STATE = "__consumer_offsets", "__transaction_state"


def test_offset_commit_that_cannot_be_written_changes_nothing(broker):
    create_topic(broker.bootstrap_servers, "t", 1)
    with RawClient(broker.bootstrap_servers) as raw:
        assert commit(raw, "simple", "", -1, "t", 0, 42) == ErrorCode.NONE
        broker.inject_fault(append_fails=True, topic=OFFSETS, count=1)
        assert commit(raw, "simple", "", -1, "t", 0, 43) == ErrorCode.NOT_COORDINATOR
        assert committed(raw, "simple", "t", 0) == 42
        assert commit(raw, "simple", "", -1, "t", 0, 44) == ErrorCode.NONE
        assert committed(raw, "simple", "t", 0) == 44
    broker.restart()
    with RawClient(broker.bootstrap_servers) as raw:
        assert committed(raw, "simple", "t", 0) == 44


def test_consumer_group_heartbeat_that_cannot_be_written_changes_nothing(broker):
    create_topic(broker.bootstrap_servers, "t", 2)
    with RawClient(broker.bootstrap_servers) as raw:
        a = heartbeat(raw, "g", "member-a", 0, topics=["t"], owned={})
        assert (a.error_code, a.member_epoch) == (ErrorCode.NONE, 1)
        before = describe(raw, "g")
        broker.inject_fault(append_fails=True, topic=OFFSETS, count=1)
        b = heartbeat(raw, "g", "member-b", 0, topics=["t"], owned={})
        assert b.error_code == ErrorCode.NOT_COORDINATOR
        after = describe(raw, "g")
        assert (after.group_epoch, after.assignment_epoch) == (before.group_epoch, before.assignment_epoch) == (1, 1)
        assert [m.member_id for m in after.members] == ["member-a"]
        assert after.members[0].assignment == before.members[0].assignment
    broker.restart()
    with RawClient(broker.bootstrap_servers) as raw:
        restarted = describe(raw, "g")
        assert (restarted.group_epoch, [m.member_id for m in restarted.members]) == (1, ["member-a"])
        b = heartbeat(raw, "g", "member-b", 0, topics=["t"], owned={})
        assert (b.error_code, b.member_epoch) == (ErrorCode.NONE, 2)


def _join(raw: RawClient, member_id: str, instance_id: str | None):
    return raw.request(11, 7, {
        "group_id": "classic", "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000, "member_id": member_id,
        "group_instance_id": instance_id, "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b"\x00\x01subscription"}], "reason": None,
    })


def _sync(raw: RawClient, generation: int, member_id: str, instance_id: str | None, assignment: bytes):
    return raw.request(14, 5, {
        "group_id": "classic", "generation_id": generation, "member_id": member_id, "group_instance_id": instance_id,
        "protocol_type": "consumer", "protocol_name": "range",
        "assignments": [{"member_id": member_id, "assignment": assignment}],
    })


def _described(raw: RawClient):
    [group] = raw.request(15, 5, {"groups": ["classic"], "include_authorized_operations": False}).groups
    return group.group_state, [(m.member_id, m.group_instance_id, m.member_assignment) for m in group.members]


def test_sync_group_whose_assignment_cannot_be_written_stores_nothing(broker):
    with RawClient(broker.bootstrap_servers) as raw:
        joined = _join(raw, "", "static-1")
        assert joined.error_code == ErrorCode.NONE and joined.leader == joined.member_id
        broker.inject_fault(append_fails=True, topic=OFFSETS, count=1)
        synced = _sync(raw, joined.generation_id, joined.member_id, "static-1", b"assignment-1")
        assert synced.error_code == ErrorCode.NOT_COORDINATOR
        # Not written, so not the group's: as Kafka, the group rebalances without it.
        state, members = _described(raw)
        assert state == "PreparingRebalance" and all(assignment == b"" for _, _, assignment in members)
    broker.restart()
    with RawClient(broker.bootstrap_servers) as raw:
        # Nothing about the group was ever written: after a restart there is no group.
        assert _described(raw) == ("Dead", [])


def test_static_member_rejoin_that_cannot_be_written_keeps_the_old_member(broker):
    with RawClient(broker.bootstrap_servers) as raw:
        joined = _join(raw, "", "static-1")
        old_id = joined.member_id
        assert _sync(raw, joined.generation_id, old_id, "static-1", b"assignment-1").error_code == ErrorCode.NONE
        assert _described(raw) == ("Stable", [(old_id, "static-1", b"assignment-1")])

        broker.inject_fault(append_fails=True, topic=OFFSETS, count=1)
        # The same instance again with no member id: Kafka gives it a new member id, written first.
        rejoined = _join(raw, "", "static-1")
        assert rejoined.error_code == ErrorCode.NOT_COORDINATOR
        assert _described(raw) == ("Stable", [(old_id, "static-1", b"assignment-1")])
        beat = raw.request(12, 4, {"group_id": "classic", "generation_id": joined.generation_id, "member_id": old_id,
                                   "group_instance_id": "static-1"})
        assert beat.error_code == ErrorCode.NONE

        rejoined = _join(raw, "", "static-1")
        assert rejoined.error_code == ErrorCode.NONE and rejoined.member_id != old_id
        assert _described(raw) == ("Stable", [(rejoined.member_id, "static-1", b"assignment-1")])
    broker.restart()
    with RawClient(broker.bootstrap_servers) as raw:
        assert _described(raw) == ("Stable", [(rejoined.member_id, "static-1", b"assignment-1")])


def _transaction(raw: RawClient, transactional_id: str, topic: str):
    """A transaction with one record produced to topic-0: (producer id, epoch)."""
    init = raw.request(22, 1, {"transactional_id": transactional_id, "transaction_timeout_ms": 60000})
    assert init.error_code == ErrorCode.NONE
    pid, epoch = init.producer_id, init.producer_epoch
    added = raw.request(24, 3, {"v3_and_below_transactional_id": transactional_id, "v3_and_below_producer_id": pid,
                                "v3_and_below_producer_epoch": epoch,
                                "v3_and_below_topics": [{"name": topic, "partitions": [0]}]})
    assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == ErrorCode.NONE
    batch = records.encode_batch([records.Record(b"k", b"v", (), 1_700_000_000_000)],
                                 producer_id=pid, producer_epoch=epoch, transactional=True)
    produced = raw.request(0, 7, {"transactional_id": transactional_id, "acks": -1, "timeout_ms": 10000,
                                  "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}]})
    assert produced.responses[0].partition_responses[0].error_code == ErrorCode.NONE
    return pid, epoch


def _state(raw: RawClient, transactional_id: str):
    [txn] = raw.request(65, 0, {"transactional_ids": [transactional_id]}).transaction_states
    return txn.transaction_state, txn.producer_id, txn.producer_epoch


def _end(raw: RawClient, transactional_id: str, pid: int, epoch: int) -> int:
    return raw.request(26, 3, {"transactional_id": transactional_id, "producer_id": pid, "producer_epoch": epoch,
                               "committed": True}).error_code


def test_end_txn_that_cannot_be_written_changes_nothing(broker):
    create_topic(broker.bootstrap_servers, "t", 1)
    with RawClient(broker.bootstrap_servers) as raw:
        pid, epoch = _transaction(raw, "tx", "t")
        assert _state(raw, "tx") == ("Ongoing", pid, epoch)
        broker.inject_fault(append_fails=True, topic=TXN_STATE, count=1)
        assert _end(raw, "tx", pid, epoch) == ErrorCode.COORDINATOR_NOT_AVAILABLE
        assert _state(raw, "tx") == ("Ongoing", pid, epoch)
        assert [h.is_control for h in raw.fetch_batches("t")] == [False]  # no marker either
        assert _end(raw, "tx", pid, epoch) == ErrorCode.NONE
        assert _state(raw, "tx") == ("CompleteCommit", pid, epoch)
    broker.restart()
    with RawClient(broker.bootstrap_servers) as raw:
        assert _state(raw, "tx") == ("CompleteCommit", pid, epoch)
        assert [h.is_control for h in raw.fetch_batches("t")] == [False, True]


def test_transaction_marker_that_cannot_be_written_is_retried_until_it_is(tmp_path):
    """EndTxn is answered once PrepareCommit is written (the decision is durable); a marker the
    disk refuses leaves the transaction in PrepareCommit and is written by the timer later, as
    Kafka's marker channel retries, and only then are the transaction's offsets visible."""
    config = {**GROUP_BROKER_CONFIG, "transaction.abort.timed.out.transaction.cleanup.interval.ms": 100}
    with TrafkaBroker(data_dir=tmp_path / "data", config=config) as broker:
        create_topic(broker.bootstrap_servers, "t", 1)
        with RawClient(broker.bootstrap_servers) as raw:
            pid, epoch = _transaction(raw, "tx", "t")
            added = raw.request(25, 3, {"transactional_id": "tx", "producer_id": pid, "producer_epoch": epoch,
                                        "group_id": "g"})
            assert added.error_code == ErrorCode.NONE
            sent = raw.request(28, 3, {
                "transactional_id": "tx", "group_id": "g", "producer_id": pid, "producer_epoch": epoch,
                "generation_id": -1, "member_id": "", "group_instance_id": None,
                "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 7,
                                                         "committed_leader_epoch": -1, "committed_metadata": None}]}]})
            assert sent.topics[0].partitions[0].error_code == ErrorCode.NONE
            fault = broker.inject_fault(append_fails=True, topic=OFFSETS)
            assert _end(raw, "tx", pid, epoch) == ErrorCode.NONE
            assert _state(raw, "tx") == ("PrepareCommit", pid, epoch)
            assert committed(raw, "g", "t", 0) == -1
            # The producer's next transaction waits for the markers.
            again = raw.request(22, 1, {"transactional_id": "tx", "transaction_timeout_ms": 60000})
            assert again.error_code == ErrorCode.CONCURRENT_TRANSACTIONS
            fault.remove()
            wait_until(lambda: _state(raw, "tx")[0] == "CompleteCommit", timeout=10, message="the retried markers")
            assert committed(raw, "g", "t", 0) == 7
        broker.restart()
        with RawClient(broker.bootstrap_servers) as raw:
            assert _state(raw, "tx") == ("CompleteCommit", pid, epoch)
            assert committed(raw, "g", "t", 0) == 7
