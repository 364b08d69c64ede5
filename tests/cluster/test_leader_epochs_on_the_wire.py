"""Leader epochs on every API that carries them (KIP-320), on the raw wire of a real cluster:
ListOffsets answers the epoch Kafka's Partition answers (the current leader epoch for LATEST,
the epoch of the batch holding the offset otherwise), and Fetch and ListOffsets check the
client's current_leader_epoch (FENCED_LEADER_EPOCH below the partition's, UNKNOWN_LEADER_EPOCH
above). A client given epoch 0 for an offset written under epoch 1 asks OffsetForLeaderEpoch(0),
hears where epoch 0 ended, and truncates what it read (a rewind that never happened).

Also: a Fetch at an offset between the high watermark and the log end answers no records, as
Kafka's LocalLog.read does, not OFFSET_OUT_OF_RANGE (a follower-fetching consumer, KIP-392,
can be ahead of its replica's high watermark)."""

from __future__ import annotations

import time
import uuid

import pytest

from trafka.testing.rawwire import RawClient
from trafka.wire import records
from trafka.wire.errors import ErrorCode as E


def batch(n: int, prefix: str) -> bytes:
    return records.encode_batch([records.Record(None, f"{prefix}-{i}".encode(), (), int(time.time() * 1000))
                                 for i in range(n)])


def leader_of(raw: RawClient, topic: str) -> tuple[int, int]:
    """(leader, leader epoch) of partition 0 from Metadata v9."""
    body = raw.request(3, 9, {"topics": [{"name": topic}], "allow_auto_topic_creation": False,
                              "include_cluster_authorized_operations": False,
                              "include_topic_authorized_operations": False})
    p = body.topics[0].partitions[0]
    return p.leader_id, p.leader_epoch


def list_offsets(raw: RawClient, topic: str, timestamp: int, current_epoch: int = -1):
    body = raw.request(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [{"name": topic, "partitions": [
        {"partition_index": 0, "current_leader_epoch": current_epoch, "timestamp": timestamp}]}]})
    return body.topics[0].partitions[0]


def fetch(raw: RawClient, topic: str, offset: int, current_epoch: int = -1):
    body = raw.request(1, 11, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
                               "isolation_level": 0, "session_id": 0, "session_epoch": -1,
                               "topics": [{"topic": topic, "partitions": [
                                   {"partition": 0, "current_leader_epoch": current_epoch, "fetch_offset": offset,
                                    "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}],
                               "forgotten_topics_data": [], "rack_id": ""})
    return body.responses[0].partitions[0]


def produce(raw: RawClient, topic: str, data: bytes, acks: int = -1) -> int:
    body = raw.request(0, 8, {"transactional_id": None, "acks": acks, "timeout_ms": 10_000,
                              "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": data}]}]})
    part = body.responses[0].partition_responses[0]
    assert part.error_code == E.NONE, part
    return part.base_offset


def create_on_three(raw: RawClient, topic: str) -> None:
    """The topic's one partition on brokers 0, 1, 2, led by broker 0."""
    created = raw.request(19, 5, {"topics": [{"name": topic, "num_partitions": -1, "replication_factor": -1,
                                              "assignments": [{"partition_index": 0, "broker_ids": [0, 1, 2]}],
                                              "configs": []}], "timeout_ms": 10_000, "validate_only": False})
    assert created.topics[0].error_code == E.NONE, created


def offset_for_leader_epoch(raw: RawClient, topic: str, epoch: int):
    body = raw.request(23, 3, {"replica_id": -1, "topics": [{"topic": topic, "partitions": [
        {"partition": 0, "current_leader_epoch": -1, "leader_epoch": epoch}]}]})
    return body.topics[0].partitions[0]


def test_list_offsets_and_fetch_speak_the_partitions_leader_epochs(trafka_cluster):
    topic = f"epochs-{uuid.uuid4().hex[:6]}"
    servers = trafka_cluster.broker_addresses
    with RawClient(servers[0]) as raw:
        create_on_three(raw, topic)
        for b in range(100):  # 1,000 records under epoch 0
            produce(raw, topic, batch(10, f"e0-{b}"))
        assert leader_of(raw, topic) == (0, 0)
    trafka_cluster.move_leader(topic, 0, 1)  # epoch 1, broker 1 leads
    with RawClient(servers[1]) as raw:
        assert leader_of(raw, topic) == (1, 1)
        for b in range(100):  # 1,000 more under epoch 1
            produce(raw, topic, batch(10, f"e1-{b}"))
        latest = list_offsets(raw, topic, -1)
        assert (latest.error_code, latest.offset, latest.leader_epoch) == (E.NONE, 2000, 1)
        earliest = list_offsets(raw, topic, -2)
        assert (earliest.offset, earliest.leader_epoch) == (0, 0)
        # A client that validates its position asks where the epoch it was given ended: 2000, no truncation.
        answer = offset_for_leader_epoch(raw, topic, latest.leader_epoch)
        assert (answer.leader_epoch, answer.end_offset) == (1, 2000)
        # The current leader epoch is checked.
        assert list_offsets(raw, topic, -1, current_epoch=0).error_code == E.FENCED_LEADER_EPOCH
        assert list_offsets(raw, topic, -1, current_epoch=2).error_code == E.UNKNOWN_LEADER_EPOCH
        assert list_offsets(raw, topic, -1, current_epoch=1).error_code == E.NONE
        assert fetch(raw, topic, 0, current_epoch=0).error_code == E.FENCED_LEADER_EPOCH
        assert fetch(raw, topic, 0, current_epoch=5).error_code == E.UNKNOWN_LEADER_EPOCH
        read = fetch(raw, topic, 1990, current_epoch=1)
        assert read.error_code == E.NONE and read.high_watermark == 2000
        assert [h.partition_leader_epoch for _, h in records.fetched_batches(bytes(read.records))] == [1]


@pytest.mark.trafka_config({"cluster.brokers": 1})
def test_list_offsets_answers_the_epoch_after_a_restart_through_test_control(trafka_cluster):
    """A single broker whose leader epochs moved (stop/start through test control)."""
    topic = f"restart-{uuid.uuid4().hex[:6]}"
    with RawClient(trafka_cluster.bootstrap_servers) as raw:
        assert raw.request(19, 5, {"topics": [{"name": topic, "num_partitions": 1, "replication_factor": 1,
                                               "assignments": [], "configs": []}], "timeout_ms": 10_000,
                                   "validate_only": False}).topics[0].error_code == E.NONE
        for b in range(20):
            produce(raw, topic, batch(10, f"a{b}"))
    trafka_cluster.stop_broker(0)
    trafka_cluster.start_broker(0)
    with RawClient(trafka_cluster.bootstrap_servers) as raw:
        _, epoch = leader_of(raw, topic)
        assert epoch > 0
        for b in range(20):
            produce(raw, topic, batch(10, f"b{b}"))
        latest = list_offsets(raw, topic, -1)
        assert (latest.offset, latest.leader_epoch) == (400, epoch)
        assert offset_for_leader_epoch(raw, topic, latest.leader_epoch).end_offset == 400


def test_a_fetch_between_the_high_watermark_and_the_log_end_is_empty(trafka_cluster):
    """acks=1 writes on the leader while its followers hold back: a fetch from the log end
    offset it was told by nobody, but which a follower-fetching consumer can reach, answers no
    records and no error."""
    topic = f"ahead-{uuid.uuid4().hex[:6]}"
    with RawClient(trafka_cluster.broker_addresses[0]) as raw:
        create_on_three(raw, topic)
        for b in range(10):
            produce(raw, topic, batch(10, f"a{b}"))
        for follower in (1, 2):
            trafka_cluster.pause_replication(follower)
        try:
            for b in range(10):
                produce(raw, topic, batch(10, f"b{b}"), acks=1)
            ahead = fetch(raw, topic, 150)
            assert (ahead.error_code, ahead.high_watermark) == (E.NONE, 100), ahead
            assert not ahead.records
            assert fetch(raw, topic, 201).error_code == E.OFFSET_OUT_OF_RANGE  # past the log end
        finally:
            for follower in (1, 2):
                trafka_cluster.resume_replication(follower)


def fetch_v12(raw: RawClient, topic: str, offset: int, last_fetched_epoch: int):
    body = raw.request(1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
                               "isolation_level": 0, "session_id": 0, "session_epoch": -1,
                               "topics": [{"topic": topic, "partitions": [
                                   {"partition": 0, "current_leader_epoch": -1, "fetch_offset": offset,
                                    "last_fetched_epoch": last_fetched_epoch, "log_start_offset": -1,
                                    "partition_max_bytes": 1 << 20}]}],
                               "forgotten_topics_data": [], "rack_id": ""})
    return body.responses[0].partitions[0]


def test_a_fetch_names_the_diverging_epoch_of_a_log_the_client_read_past(trafka_cluster):
    """KIP-320: a consumer's Fetch v12+ carries the epoch of the last batch it read; when the
    leader's log of that epoch ends before the fetch offset (records the consumer read were
    truncated away, or it read under another leader's epoch), the answer names the diverging
    epoch and its end offset instead of records, as Kafka's Partition does, so the client
    detects the truncation instead of reading on or resetting."""
    topic = f"diverging-{uuid.uuid4().hex[:6]}"
    servers = trafka_cluster.broker_addresses
    with RawClient(servers[0]) as raw:
        create_on_three(raw, topic)
        for b in range(100):  # offsets 0-999 under epoch 0
            produce(raw, topic, batch(10, f"e0-{b}"))
    trafka_cluster.move_leader(topic, 0, 1)
    with RawClient(servers[1]) as raw:
        for b in range(100):  # offsets 1000-1999 under epoch 1
            produce(raw, topic, batch(10, f"e1-{b}"))
        # Read up to 1,500 believing epoch 0 went on there: epoch 0 ended at 1,000.
        diverged = fetch_v12(raw, topic, 1500, 0)
        assert diverged.error_code == E.NONE and not diverged.records
        assert (diverged.diverging_epoch.epoch, diverged.diverging_epoch.end_offset) == (0, 1000)
        # Consistent positions read on.
        for offset, epoch in [(500, 0), (1000, 0), (1500, 1), (1990, 1)]:
            read = fetch_v12(raw, topic, offset, epoch)
            assert read.error_code == E.NONE and read.diverging_epoch is None and read.records, (offset, epoch, read)
        # An epoch the leader never had: out of range, as Kafka answers.
        assert fetch_v12(raw, topic, 1500, 7).error_code == E.OFFSET_OUT_OF_RANGE
