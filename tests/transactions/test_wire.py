"""Transactions on the raw wire: what a client cannot make its library send. Produce outside
the transaction (a partition not added, a non-transactional batch inside an open transaction,
a fenced epoch), OffsetFetch require_stable while transactional offsets are pending, and the
Fetch fields of read_committed (last_stable_offset, aborted_transactions)."""

from __future__ import annotations

import uuid

from trafka.testing.rawwire import RawClient
from trafka.wire import records
from trafka.wire.errors import ErrorCode as E


def txn_batch(pid: int, epoch: int, seq: int, value: bytes, transactional: bool = True) -> bytes:
    return records.encode_batch([records.Record(None, value, (), 1_700_000_000_000)], producer_id=pid,
                                producer_epoch=epoch, base_sequence=seq, transactional=transactional)


def produce(raw: RawClient, topic: str, batch: bytes, transactional_id: str | None):
    body = raw.request(0, 7, {"transactional_id": transactional_id, "acks": -1, "timeout_ms": 10000,
                              "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}]})
    return body.responses[0].partition_responses[0].error_code


def fetch(raw: RawClient, topic: str, isolation: int):
    body = raw.request(1, 11, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
                               "isolation_level": isolation, "session_id": 0, "session_epoch": -1,
                               "topics": [{"topic": topic, "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                                                           "fetch_offset": 0, "log_start_offset": -1,
                                                                           "partition_max_bytes": 1 << 20}]}],
                               "forgotten_topics_data": [], "rack_id": ""})
    return body.responses[0].partitions[0]


def test_transactional_produce_and_read_committed_fields(trafka_broker):
    topic, tid, group = f"wire-{uuid.uuid4().hex[:6]}", "wire-app", "wire-group"
    with RawClient(trafka_broker.bootstrap_servers) as raw:
        assert raw.request(19, 4, {"topics": [{"name": topic, "num_partitions": 1, "replication_factor": 1,
                                               "assignments": [], "configs": []}], "timeout_ms": 10000,
                                   "validate_only": False}).topics[0].error_code == 0
        assert raw.request(10, 3, {"key": tid, "key_type": 1}).error_code == E.NONE
        init = raw.request(22, 3, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                   "producer_id": -1, "producer_epoch": -1})
        pid, epoch = init.producer_id, init.producer_epoch
        # Not added to the transaction yet: refused, nothing written.
        assert produce(raw, topic, txn_batch(pid, epoch, 0, b"early"), tid) == E.INVALID_TXN_STATE
        added = raw.request(24, 3, {"v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid,
                                    "v3_and_below_producer_epoch": epoch,
                                    "v3_and_below_topics": [{"name": topic, "partitions": [0]}]})
        assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == E.NONE
        assert produce(raw, topic, txn_batch(pid, epoch, 0, b"aborted"), tid) == E.NONE
        # A transactional batch without the request's transactional id: nobody could end it.
        assert produce(raw, topic, txn_batch(pid, epoch, 1, b"orphan"), None) == E.INVALID_RECORD
        # The same producer outside its transaction: refused.
        assert produce(raw, topic, txn_batch(pid, epoch, 1, b"plain", transactional=False), None) == E.INVALID_TXN_STATE
        assert raw.request(25, 3, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                                   "group_id": group}).error_code == E.NONE
        committed = raw.request(28, 3, {"transactional_id": tid, "group_id": group, "producer_id": pid,
                                        "producer_epoch": epoch, "generation_id": -1, "member_id": "",
                                        "group_instance_id": None,
                                        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                                                   "committed_leader_epoch": -1,
                                                                                   "committed_metadata": ""}]}]})
        assert committed.topics[0].partitions[0].error_code == E.NONE
        stable = raw.request(9, 7, {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}],
                                    "require_stable": True})
        assert stable.topics[0].partitions[0].error_code == E.UNSTABLE_OFFSET_COMMIT
        loose = raw.request(9, 7, {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}],
                                   "require_stable": False})
        assert (loose.topics[0].partitions[0].error_code, loose.topics[0].partitions[0].committed_offset) == (E.NONE, -1)

        open_read = fetch(raw, topic, 1)
        assert (open_read.high_watermark, open_read.last_stable_offset) == (1, 0)
        assert records_of(open_read) == []
        assert raw.request(26, 3, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                                   "committed": False}).error_code == E.NONE
        after = fetch(raw, topic, 1)
        assert (after.high_watermark, after.last_stable_offset) == (2, 2)
        assert [(t.producer_id, t.first_offset) for t in after.aborted_transactions] == [(pid, 0)]
        assert [h.is_control for h in records_of(after)] == [False, True]
        assert fetch(raw, topic, 0).aborted_transactions is None
        assert raw.request(9, 7, {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}],
                                  "require_stable": True}).topics[0].partitions[0].committed_offset == -1
        # A second InitProducerId fences the first epoch.
        assert raw.request(22, 4, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                   "producer_id": -1, "producer_epoch": -1}).producer_epoch == epoch + 1
        assert raw.request(24, 3, {"v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid,
                                   "v3_and_below_producer_epoch": epoch,
                                   "v3_and_below_topics": [{"name": topic, "partitions": [0]}]}
                           ).results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == E.PRODUCER_FENCED
        assert produce(raw, topic, txn_batch(pid, epoch, 1, b"zombie"), tid) == E.INVALID_PRODUCER_EPOCH
        assert raw.request(22, 4, {"transactional_id": tid, "transaction_timeout_ms": 10 ** 9, "producer_id": -1,
                                   "producer_epoch": -1}).error_code == E.INVALID_TRANSACTION_TIMEOUT


def records_of(partition) -> list[records.BatchHeader]:
    data = partition.records or b""
    if isinstance(data, list):
        data = b"".join(bytes(d) for d in data)
    return [h for _, h in records.iter_batches(data)]
