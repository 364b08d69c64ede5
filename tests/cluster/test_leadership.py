"""Leaders and replicas that move without restarting anything (docs/cluster.md): ElectLeaders,
auto.leader.rebalance.enable, partition reassignment under load, follower fetching (KIP-392),
the control endpoints, and a whole-process restart keeping every broker's replicas."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
from confluent_kafka import Consumer, ElectionType, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from testkit.cluster import read_from_start, wait_for
from trafka.testing.rawwire import RawClient


def _admin(cluster) -> AdminClient:
    return AdminClient({"bootstrap.servers": cluster.bootstrap_servers})


def _create(cluster, name: str, partitions: int, replication: int = 3, **configs) -> None:
    admin = _admin(cluster)
    for future in admin.create_topics([NewTopic(name, partitions, replication, config=configs)]).values():
        future.result(10)


def _leaders(cluster, topic: str) -> dict[int, int]:
    return {p: cluster.partition_state(topic, p)["leader"] for p in range(len(_admin(cluster).list_topics(
        topic, timeout=10).topics[topic].partitions))}


def _wait(condition, timeout=20, what="the condition"):
    wait_for(condition, timeout=timeout, what=what)


def _in_sync(cluster, topic: str, partitions: int):
    return lambda: all(len(cluster.partition_state(topic, p)["isr"]) == len(cluster.partition_state(topic, p)["replicas"])
                       for p in range(partitions))


def _bounced(cluster, topic: str, broker: int) -> dict[int, int]:
    """A 3-partition RF 3 topic whose broker `broker` was stopped and started again (its
    leaderships moved away) and is back in every ISR; each partition's preferred leader."""
    _create(cluster, topic, 3)
    preferred = {p: cluster.partition_state(topic, p)["replicas"][0] for p in range(3)}
    cluster.stop_broker(broker)
    cluster.start_broker(broker)
    _wait(_in_sync(cluster, topic, 3), what=f"broker {broker} back in sync")
    return preferred


def test_preferred_leaders_return_with_elect_leaders(trafka_cluster):
    preferred = _bounced(trafka_cluster, "prefs", 0)
    moved = [p for p in range(3) if _leaders(trafka_cluster, "prefs")[p] != preferred[p]]
    assert moved  # broker 0 lost the partition it preferred
    admin = _admin(trafka_cluster)
    result = admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition("prefs", p) for p in range(3)]).result(10)
    errors = {tp.partition: error for tp, error in result.items()}
    assert all(errors[p] is None for p in moved)  # elected
    assert all(errors[p] is not None for p in range(3) if p not in moved)  # ELECTION_NOT_NEEDED
    assert _leaders(trafka_cluster, "prefs") == preferred
    epochs = {p: trafka_cluster.partition_state("prefs", p)["leader_epoch"] for p in moved}
    assert all(epoch == 2 for epoch in epochs.values())  # moved away and back: two elections


@pytest.mark.trafka_config({"leader.imbalance.check.interval.seconds": 60})
def test_auto_leader_rebalance_moves_leaders_back_on_broker_time(trafka_cluster):
    preferred = _bounced(trafka_cluster, "auto", 1)
    assert _leaders(trafka_cluster, "auto") != preferred
    trafka_cluster.advance_clock(61_000)
    assert _leaders(trafka_cluster, "auto") == preferred


def test_unclean_election_of_an_offline_partition(trafka_cluster):
    _create(trafka_cluster, "lonely", 1, 2)
    leader, follower = trafka_cluster.partition_state("lonely", 0)["replicas"]
    trafka_cluster.stop_broker(follower)  # out of the ISR
    trafka_cluster.stop_broker(leader)  # offline: the last in-sync replica is down
    trafka_cluster.start_broker(follower)
    assert trafka_cluster.partition_state("lonely", 0)["leader"] == -1  # not in sync: unclean election is off
    admin = _admin(trafka_cluster)
    result = admin.elect_leaders(ElectionType.UNCLEAN, [TopicPartition("lonely", 0)]).result(10)
    assert list(result.values()) == [None]
    state = trafka_cluster.partition_state("lonely", 0)
    assert (state["leader"], state["isr"]) == (follower, [follower])
    trafka_cluster.start_broker(leader)


def test_reassignment_under_load_moves_replicas_and_leaders(trafka_cluster):
    _create(trafka_cluster, "moving", 2, 1)
    before = {p: trafka_cluster.partition_state("moving", p)["replicas"] for p in range(2)}
    producer = Producer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "acks": "all",
                         "enable.idempotence": True, "linger.ms": 1})
    stop = threading.Event()
    acked: list[bytes] = []

    def produce():
        i = 0
        while not stop.is_set():
            producer.produce("moving", b"m-%06d" % i, partition=i % 2,
                             on_delivery=lambda err, msg: acked.append(msg.value()) if err is None else None)
            producer.poll(0)
            i += 1
            time.sleep(0.001)
        producer.flush(30)

    writer = threading.Thread(target=produce)
    writer.start()
    try:
        time.sleep(0.5)
        targets = {p: [r for r in (0, 1, 2) if r not in before[p]][:2] for p in range(2)}  # new brokers, RF 2
        with RawClient(trafka_cluster.bootstrap_servers.split(",")[0]) as client:
            answer = client.request(45, 0, {"timeout_ms": 10000, "topics": [{"name": "moving", "partitions": [
                {"partition_index": p, "replicas": targets[p]} for p in range(2)]}]})
        assert [r.error_code for t in answer.responses for r in t.partitions] == [0, 0]
        _wait(lambda: all(trafka_cluster.partition_state("moving", p)["reassigning_to"] is None for p in range(2)),
              what="the reassignments to finish")
        with RawClient(trafka_cluster.bootstrap_servers.split(",")[0]) as client:
            listed = client.request(46, 0, {"timeout_ms": 10000, "topics": None})
        assert listed.topics == []
        time.sleep(0.5)
    finally:
        stop.set()
        writer.join(30)
    for p in range(2):
        state = trafka_cluster.partition_state("moving", p)
        assert state["replicas"] == targets[p] and state["leader"] in targets[p]
        old = before[p][0]  # its copy on the broker that no longer holds it is gone
        assert not (trafka_cluster.data_dir / f"broker-{old}" / f"moving-{p}").exists()
    got = set(read_from_start(trafka_cluster.bootstrap_servers, "moving", 2, len(acked)))
    assert len(acked) > 100 and set(acked) <= got  # every acknowledged record survived the move


@pytest.mark.trafka_config({"replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"})
def test_a_consumer_fetches_from_a_follower_in_its_rack(trafka_cluster):
    _create(trafka_cluster, "near", 1)
    state = trafka_cluster.partition_state("near", 0)
    follower = state["replicas"][1]
    rack = "abc"[follower]
    producer = Producer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "acks": "all"})
    for i in range(50):
        producer.produce("near", b"n-%d" % i)
    assert producer.flush(10) == 0

    def fetch(address):
        with RawClient(address) as client:
            body = client.request(1, 11, {
                "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
                "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": rack,
                "topics": [{"topic": "near", "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                                              "fetch_offset": 0, "log_start_offset": -1,
                                                              "partition_max_bytes": 1 << 20}]}]})
        return body.responses[0].partitions[0]

    from_leader = fetch(trafka_cluster.broker_addresses[state["leader"]])
    assert (from_leader.error_code, from_leader.preferred_read_replica, from_leader.records or b"") == (0, follower, b"")
    _wait(lambda: fetch(trafka_cluster.broker_addresses[follower]).high_watermark == 50, what="the follower's high watermark")
    from_follower = fetch(trafka_cluster.broker_addresses[follower])
    assert from_follower.error_code == 0 and from_follower.records
    consumer = Consumer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "group.id": "near-readers",
                         "client.rack": rack, "auto.offset.reset": "earliest"})
    consumer.subscribe(["near"])
    got, deadline = [], time.monotonic() + 20
    while len(got) < 50 and time.monotonic() < deadline:
        message = consumer.poll(0.3)
        if message is not None and message.error() is None:
            got.append(message.value())
    consumer.close()
    assert sorted(got) == sorted(b"n-%d" % i for i in range(50))


def test_the_control_endpoints_over_http(trafka_cluster):
    base = trafka_cluster.console_url.rstrip("/") + "/api/v1"

    def call(method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(base + path, data=data, method=method)
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    status, brokers = call("GET", "/brokers")
    assert status == 200 and [b["node_id"] for b in brokers] == [0, 1, 2] and all(b["alive"] for b in brokers)
    connected = RawClient(trafka_cluster.broker_addresses[2])
    assert call("POST", "/brokers/2/stop")[1]["alive"] is False
    assert connected.closed_by_broker()  # its connections close...
    connected.close()
    host, port = trafka_cluster.broker_addresses[2].rsplit(":", 1)
    with pytest.raises(ConnectionRefusedError):  # ... and it refuses new ones
        socket.create_connection((host, int(port)), timeout=2)
    status, error = call("POST", "/brokers/2/stop")
    assert status == 400 and "already stopped" in json.dumps(error)
    assert call("POST", "/brokers/7/stop")[0] == 404
    assert call("POST", "/brokers/2/start")[1]["alive"] is True
    _create(trafka_cluster, "steered", 1)
    follower = trafka_cluster.partition_state("steered", 0)["replicas"][1]
    _wait(_in_sync(trafka_cluster, "steered", 1), what="the replicas in sync")
    status, moved = call("POST", "/partitions/steered/0/leader", {"broker": follower})
    assert status == 200 and moved["leader"] == follower and moved["leader_epoch"] == 1
    assert call("POST", "/partitions/steered/0/leader", {"broker": "x"})[0] == 400
    assert call("GET", "/partitions/nope/0")[0] == 404


def test_a_whole_process_restart_keeps_every_replica(trafka_cluster):
    _create(trafka_cluster, "durable", 2)
    producer = Producer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "acks": "all"})
    for i in range(200):
        producer.produce("durable", b"d-%d" % i, partition=i % 2)
    assert producer.flush(10) == 0
    _wait(_in_sync(trafka_cluster, "durable", 2), what="the replicas in sync")
    trafka_cluster.stop_broker(2)  # its leadership moves: epochs go up, and are kept
    states = {p: trafka_cluster.partition_state("durable", p) for p in range(2)}
    trafka_cluster.restart(kill=True)
    for p in range(2):
        kept = trafka_cluster.partition_state("durable", p)
        assert (kept["leader"], kept["leader_epoch"], kept["replicas"]) == (
            states[p]["leader"], states[p]["leader_epoch"], states[p]["replicas"])
    _wait(_in_sync(trafka_cluster, "durable", 2), what="every replica in sync after the restart")
    for p in range(2):
        copies = {node: b"".join(f.read_bytes() for f in sorted(
            (trafka_cluster.data_dir / f"broker-{node}" / f"durable-{p}").glob("*.log"))) for node in range(3)}
        assert len(set(copies.values())) == 1 and copies[0].count(b"d-") == 100  # byte-for-byte the same replicas


def test_create_partitions_with_assignments_and_a_reassignment_from_python(trafka_cluster):
    from confluent_kafka.admin import NewPartitions

    _create(trafka_cluster, "growing", 1, 2)
    admin = _admin(trafka_cluster)
    admin.create_partitions([NewPartitions("growing", 3, replica_assignment=[[2, 0], [1, 2]])])["growing"].result(10)
    assert [trafka_cluster.partition_state("growing", p)["replicas"] for p in (1, 2)] == [[2, 0], [1, 2]]
    refused = admin.create_partitions([NewPartitions("growing", 4, replica_assignment=[[5, 0]])])["growing"]
    with pytest.raises(Exception, match="includes broker 5, but no broker with that ID is registered"):
        refused.result(10)
    moved = trafka_cluster.reassign_partition("growing", 1, [1])  # RF 2 -> 1, the leader goes too
    _wait(lambda: trafka_cluster.partition_state("growing", 1)["reassigning_to"] is None, what="the move")
    state = trafka_cluster.partition_state("growing", 1)
    assert moved["reassigning_to"] in ([1], None)
    assert (state["replicas"], state["leader"], state["isr"]) == ([1], 1, [1])
    assert state["leader_epoch"] == 1
