"""Transaction version 2 (KIP-890 part 2) on the raw wire: the request versions decide. A
transactional Produce v12 adds its partition and v11 does not, TxnOffsetCommit v5 adds the
group's partition and v4 does not, EndTxn v5 answers the bumped epoch (and its retry the
same), EndTxn v4 keeps the epoch, and the markers carry the epoch the answer named."""

from __future__ import annotations

import uuid

from trafka.testing.rawwire import RawClient
from trafka.wire import records
from trafka.wire.errors import ErrorCode as E


def txn_batch(pid: int, epoch: int, seq: int, value: bytes) -> bytes:
    return records.encode_batch([records.Record(None, value, (), 1_700_000_000_000)], producer_id=pid,
                                producer_epoch=epoch, base_sequence=seq, transactional=True)


def produce(raw: RawClient, version: int, topic: str, partition: int, batch: bytes, tid: str) -> int:
    body = raw.request(0, version, {"transactional_id": tid, "acks": -1, "timeout_ms": 10000,
                                    "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": batch}]}]})
    return body.responses[0].partition_responses[0].error_code


def end_txn(raw: RawClient, version: int, tid: str, pid: int, epoch: int, commit: bool):
    body = raw.request(26, version, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch, "committed": commit})
    return body.error_code, body.producer_id, body.producer_epoch


def txn_offset_commit(raw: RawClient, version: int, tid: str, group: str, pid: int, epoch: int, topic: str, offset: int) -> int:
    body = raw.request(28, version, {
        "transactional_id": tid, "group_id": group, "producer_id": pid, "producer_epoch": epoch,
        "generation_id": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                   "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
    return body.topics[0].partitions[0].error_code


def marker_epochs(raw: RawClient, topic: str, partition: int) -> list[int]:
    body = raw.request(1, 11, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
                               "isolation_level": 0, "session_id": 0, "session_epoch": -1,
                               "topics": [{"topic": topic, "partitions": [{"partition": partition, "current_leader_epoch": -1,
                                                                           "fetch_offset": 0, "log_start_offset": -1,
                                                                           "partition_max_bytes": 1 << 20}]}],
                               "forgotten_topics_data": [], "rack_id": ""})
    data = body.responses[0].partitions[0].records or b""
    if isinstance(data, list):
        data = b"".join(bytes(d) for d in data)
    return [h.producer_epoch for _, h in records.iter_batches(data) if h.is_control]


def test_request_versions_decide_implicit_adds_and_epoch_bumps(trafka_broker):
    topic, tid, group = f"wire2-{uuid.uuid4().hex[:6]}", f"wire2-{uuid.uuid4().hex[:6]}", "wire2-group"
    with RawClient(trafka_broker.bootstrap_servers) as raw:
        assert raw.request(19, 4, {"topics": [{"name": topic, "num_partitions": 2, "replication_factor": 1,
                                               "assignments": [], "configs": []}], "timeout_ms": 10000,
                                   "validate_only": False}).topics[0].error_code == 0
        init = raw.request(22, 5, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                   "producer_id": -1, "producer_epoch": -1})
        pid, epoch = init.producer_id, init.producer_epoch
        # v11 needs AddPartitionsToTxn; v12 adds the partition itself.
        assert produce(raw, 11, topic, 0, txn_batch(pid, epoch, 0, b"v11"), tid) == E.TRANSACTION_ABORTABLE
        assert produce(raw, 12, topic, 0, txn_batch(pid, epoch, 0, b"v12"), tid) == E.NONE
        assert produce(raw, 11, topic, 0, txn_batch(pid, epoch, 1, b"v11-added"), tid) == E.NONE
        # TxnOffsetCommit v4 needs AddOffsetsToTxn; v5 adds the group's partition itself.
        assert txn_offset_commit(raw, 4, tid, group, pid, epoch, topic, 1) == E.INVALID_TXN_STATE
        assert txn_offset_commit(raw, 5, tid, group, pid, epoch, topic, 1) == E.NONE
        assert end_txn(raw, 5, tid, pid, epoch, True) == (E.NONE, pid, epoch + 1)
        assert end_txn(raw, 5, tid, pid, epoch, True) == (E.NONE, pid, epoch + 1)  # a retry
        assert marker_epochs(raw, topic, 0) == [epoch + 1]
        committed = raw.request(9, 7, {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}],
                                       "require_stable": True})
        assert committed.topics[0].partitions[0].committed_offset == 1
        # The old epoch is fenced; the new one starts the next transaction, which aborts.
        assert produce(raw, 12, topic, 1, txn_batch(pid, epoch, 0, b"zombie"), tid) == E.INVALID_PRODUCER_EPOCH
        assert produce(raw, 12, topic, 1, txn_batch(pid, epoch + 1, 0, b"aborted"), tid) == E.NONE
        assert end_txn(raw, 5, tid, pid, epoch + 1, False) == (E.NONE, pid, epoch + 2)
        assert marker_epochs(raw, topic, 1) == [epoch + 2]
        # A transaction begun with AddPartitionsToTxn keeps its epoch, even ended by EndTxn v5.
        added = raw.request(24, 3, {"v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid,
                                    "v3_and_below_producer_epoch": epoch + 2,
                                    "v3_and_below_topics": [{"name": topic, "partitions": [1]}]})
        assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == E.NONE
        assert produce(raw, 7, topic, 1, txn_batch(pid, epoch + 2, 0, b"classic"), tid) == E.NONE
        assert end_txn(raw, 5, tid, pid, epoch + 2, True) == (E.NONE, pid, epoch + 2)
        assert marker_epochs(raw, topic, 1) == [epoch + 2, epoch + 2]
        assert end_txn(raw, 4, tid, pid, epoch + 2, True)[0] == E.NONE  # the classic retry
        # Version 2 may abort with nothing added; the classic EndTxn may not.
        assert end_txn(raw, 4, tid, pid, epoch + 2, False)[0] == E.INVALID_TXN_STATE
        assert end_txn(raw, 5, tid, pid, epoch + 2, False) == (E.NONE, pid, epoch + 3)


def test_a_partition_not_in_the_transaction_is_answered_by_produce_version(trafka_broker):
    """Kafka's transaction verification (KafkaApis, AddPartitionsToTxnManager, ReplicaManager):
    v3-10 INVALID_TXN_STATE with its message, v11 TRANSACTION_ABORTABLE, v12+ adds the partition;
    an epoch other than the transaction's is INVALID_PRODUCER_EPOCH whatever the version."""
    topic, tid = f"verify-{uuid.uuid4().hex[:6]}", f"verify-{uuid.uuid4().hex[:6]}"
    with RawClient(trafka_broker.bootstrap_servers) as raw:
        assert raw.request(19, 4, {"topics": [{"name": topic, "num_partitions": 3, "replication_factor": 1,
                                               "assignments": [], "configs": []}], "timeout_ms": 10000,
                                   "validate_only": False}).topics[0].error_code == 0
        init = raw.request(22, 4, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                   "producer_id": -1, "producer_epoch": -1})
        pid, epoch = init.producer_id, init.producer_epoch

        def answer(version: int, partition: int, producer_epoch: int = epoch):
            body = raw.request(0, version, {"transactional_id": tid, "acks": -1, "timeout_ms": 10000, "topic_data": [
                {"name": topic, "partition_data": [{"index": partition, "records": txn_batch(pid, producer_epoch, 0, b"x")}]}]})
            row = body.responses[0].partition_responses[0]
            return row.error_code, getattr(row, "error_message", None)

        assert answer(3, 0) == (E.INVALID_TXN_STATE, None)  # no error_message field before v8
        for version in (8, 9, 10):
            assert answer(version, 0) == (E.INVALID_TXN_STATE, "Partition was not added to the transaction")
        assert answer(11, 0) == (E.TRANSACTION_ABORTABLE, None)
        # The transaction's partitions are the coordinator's: AddPartitionsToTxn makes 1 acceptable to v3-11.
        added = raw.request(24, 3, {"v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid,
                                    "v3_and_below_producer_epoch": epoch,
                                    "v3_and_below_topics": [{"name": topic, "partitions": [1]}]})
        assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == E.NONE
        assert answer(10, 1) == (E.NONE, None)
        assert answer(11, 0) == (E.TRANSACTION_ABORTABLE, None)  # 0 is still outside it
        for version in (3, 10, 11, 12):
            assert answer(version, 1, epoch + 1)[0] == E.INVALID_PRODUCER_EPOCH
        assert answer(12, 2) == (E.NONE, None)  # v12 adds 2 to the open transaction


def test_transaction_verification_off_skips_the_check_but_not_version_2_adds(tmp_path):
    """transaction.partition.verification.enable=false, as Kafka's ReplicaManager reads it: a
    transactional Produce v3-11 is appended without asking the coordinator (a partition not added
    is accepted, and the transaction does not learn of it, so no marker ends it there); v12+ still
    goes to the coordinator, which adds the partition (KIP-890 part 2 needs it). Dynamic, as in Kafka."""
    from trafka.testing import TrafkaBroker

    topic, tid = f"unverified-{uuid.uuid4().hex[:6]}", f"unverified-{uuid.uuid4().hex[:6]}"
    with TrafkaBroker(data_dir=tmp_path / "data", config={"transaction.partition.verification.enable": "false"}) as broker, \
            RawClient(broker.bootstrap_servers) as raw:
        assert raw.request(19, 4, {"topics": [{"name": topic, "num_partitions": 2, "replication_factor": 1,
                                               "assignments": [], "configs": []}], "timeout_ms": 10000,
                                   "validate_only": False}).topics[0].error_code == 0
        init = raw.request(22, 5, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                   "producer_id": -1, "producer_epoch": -1})
        pid, epoch = init.producer_id, init.producer_epoch
        assert produce(raw, 12, topic, 1, txn_batch(pid, epoch, 0, b"added"), tid) == E.NONE
        for version, seq in ((3, 0), (10, 1), (11, 2)):
            assert produce(raw, version, topic, 0, txn_batch(pid, epoch, seq, b"unverified"), tid) == E.NONE, version
        [described] = raw.request(65, 0, {"transactional_ids": [tid]}).transaction_states
        assert [(t.name, list(t.partition_indexes)) for t in described.topics] == [(topic, [1])]
        # a cluster-wide dynamic setting, as in Kafka: turned on, the check is back at once
        [changed] = raw.request(44, 1, {"validate_only": False, "resources": [{"resource_type": 4, "resource_name": "", "configs": [
            {"name": "transaction.partition.verification.enable", "config_operation": 0, "value": "true"}]}]}).responses
        assert changed.error_code == E.NONE, changed.error_message
        assert produce(raw, 10, topic, 0, txn_batch(pid, epoch, 3, b"checked"), tid) == E.INVALID_TXN_STATE
        assert end_txn(raw, 5, tid, pid, epoch, True) == (E.NONE, pid, epoch + 1)
        assert marker_epochs(raw, topic, 1) == [epoch + 1]
        assert marker_epochs(raw, topic, 0) == []  # the coordinator never knew of partition 0
