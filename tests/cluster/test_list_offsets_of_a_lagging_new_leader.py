"""A new leader whose high watermark is still below the offset its leader epoch began at answers
a client's ListOffsets for the latest offset (or a timestamp it cannot yet answer) with
OFFSET_NOT_AVAILABLE (LEADER_NOT_AVAILABLE before v5), as Kafka's Partition.fetchOffsetForTimestamp
does, and clients ask again; before, trafka answered its lagging high watermark, and a consumer
starting at "latest" then read records written long before it started. Duplicate partitions in
one request are INVALID_REQUEST. Real clients and the wire, in a simulated cluster."""

from __future__ import annotations

import json

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from testkit.cluster import produce_acknowledged
from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_until

OLD, NEW = 1000, 300


def _size(cluster, node: int) -> int:
    with RawClient(cluster.broker_addresses[node]) as client:
        body = client.request(35, 1, {"topics": [{"topic": "lag", "partitions": [0]}]})
    return sum(p.partition_size for d in body.results for t in d.topics for p in t.partitions)


def _latest(cluster, node: int, version: int = 7, partitions=(0,)) -> list[tuple[int, int]]:
    with RawClient(cluster.broker_addresses[node]) as client:
        body = client.request(2, version, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": "lag", "partitions": [{"partition_index": p, "current_leader_epoch": -1, "timestamp": -1}
                                           for p in partitions]}]})
    return [(p.error_code, p.offset) for p in body.topics[0].partitions]


def test_a_new_leader_behind_its_epoch_start_answers_offset_not_available(trafka_cluster):
    cluster = trafka_cluster
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    admin.create_topics([NewTopic("lag", 1, 3, config={"min.insync.replicas": "1"})])["lag"].result(10)
    state = cluster.partition_state("lag", 0)
    leader = state["leader"]
    caught_up, behind = [r for r in state["replicas"] if r != leader]
    cluster.pause_replication(behind)  # in the ISR, holding the high watermark at 0
    produce_acknowledged(cluster, "lag", [b"old-%d" % i for i in range(OLD)], acks="1")
    wait_until(lambda: _size(cluster, caught_up) == _size(cluster, leader) > 0, 20, "the other follower has every record")
    assert _latest(cluster, leader) == [(0, 0)]  # the high watermark, held by the paused follower
    cluster.move_leader("lag", 0, caught_up)  # its epoch starts at 1000; its high watermark is 0
    assert _latest(cluster, caught_up) == [(78, -1)]  # OFFSET_NOT_AVAILABLE
    assert _latest(cluster, caught_up, version=4) == [(5, -1)]  # LEADER_NOT_AVAILABLE
    assert _latest(cluster, caught_up, partitions=(0, 0)) == [(42, -1), (42, -1)]  # INVALID_REQUEST

    # A consumer starting at "latest" meanwhile waits for the answer instead of starting at 0.
    fetching: list[tuple[str, int]] = []  # (fetch state, next offset) from librdkafka's statistics

    def stats(text: str) -> None:
        partition = json.loads(text)["topics"].get("lag", {}).get("partitions", {}).get("0")
        if partition:
            fetching.append((partition["fetch_state"], partition["next_offset"]))

    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "late",
                         "auto.offset.reset": "latest", "enable.auto.commit": False,
                         "statistics.interval.ms": 100, "stats_cb": stats})
    consumer.assign([TopicPartition("lag", 0, -1)])  # OFFSET_END
    seen: list[bytes] = []
    try:
        for _ in range(10):  # it asks while the new leader lags
            seen += [m.value() for m in consumer.consume(100, 0.1) if m.error() is None]
        cluster.resume_replication(behind)
        wait_until(lambda: _latest(cluster, caught_up) == [(0, OLD)], 20, "the high watermark past the epoch start")

        def positioned():
            seen.extend(m.value() for m in consumer.consume(100, 0.1) if m.error() is None)
            return bool(fetching) and fetching[-1][0] == "active"
        wait_until(positioned, 20, lambda: f"the consumer fetching ({fetching[-1:]})")
        assert fetching[-1][1] == OLD, fetching[-1]  # "latest" is where the log ends, not 0
        produce_acknowledged(cluster, "lag", [b"new-%d" % i for i in range(NEW)], acks="1")

        def more():
            seen.extend(m.value() for m in consumer.consume(500, 0.2) if m.error() is None)
            return len(seen) >= NEW
        wait_until(more, 30, lambda: f"{NEW} new records (read {len(seen)})")
    finally:
        consumer.close()
    assert seen == [b"new-%d" % i for i in range(NEW)]
