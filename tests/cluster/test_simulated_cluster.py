"""A simulated cluster (`cluster.brokers`): several brokers in one process, each with its own
listener and data dir, partitions spread over them (docs/cluster.md). Real clients route by
Metadata; a broker that does not lead a partition says NOT_LEADER_OR_FOLLOWER."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer

from trafka.broker.coordinators.runtime.internal_topic import partition_for
from trafka.testing.rawwire import RawClient
from trafka.wire import records
from trafka.wire.errors import ErrorCode

NOT_LEADER = ErrorCode.NOT_LEADER_OR_FOLLOWER


def _admin(cluster) -> AdminClient:
    return AdminClient({"bootstrap.servers": cluster.bootstrap_servers})


def _create(cluster, topic: str, partitions: int | None = None, **kwargs) -> None:
    admin = _admin(cluster)  # kept alive until the futures are done
    new = NewTopic(topic, **kwargs) if partitions is None else NewTopic(topic, partitions, **kwargs)
    for future in admin.create_topics([new]).values():
        future.result(10)


def _leaders(cluster, topic: str) -> dict[int, int]:
    metadata = _admin(cluster).list_topics(topic, timeout=10)
    return {p.id: p.leader for p in metadata.topics[topic].partitions.values()}


def _produce(cluster, topic: str, count: int, **config) -> None:
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "enable.idempotence": True,
                         "linger.ms": 5, **config})
    for i in range(count):
        producer.produce(topic, key=b"%d" % i, value=b"value-%d" % i)
    assert producer.flush(30) == 0


def _consume(cluster, topic: str, count: int, group: str, **config) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False, **config})
    consumer.subscribe([topic])
    values: list[bytes] = []
    deadline = time.monotonic() + 30
    try:
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.append(message.value())
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return values


def _committed_total(cluster, group: str, topic: str, partitions: int) -> int:
    """The sum of the group's committed offsets over the topic's partitions."""
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group})
    try:
        committed = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)
    finally:
        consumer.close()
    return sum(tp.offset for tp in committed)


def test_every_broker_is_in_metadata_with_its_rack_and_partitions_spread_over_them(trafka_cluster):
    admin = KafkaAdminClient(bootstrap_servers=trafka_cluster.bootstrap_servers)
    try:
        described = admin.describe_cluster()
    finally:
        admin.close()
    brokers = {b["broker_id"]: (f'{b["host"]}:{b["port"]}', b["rack"]) for b in described["brokers"]}
    assert brokers == {i: (trafka_cluster.broker_addresses[i], "abc"[i]) for i in range(3)}
    assert described["controller_id"] == 0
    metadata = _admin(trafka_cluster).list_topics(timeout=10)
    assert {b.id: f"{b.host}:{b.port}" for b in metadata.brokers.values()} == trafka_cluster.broker_addresses
    _create(trafka_cluster, "spread", 6)
    leaders = _leaders(trafka_cluster, "spread")
    assert sorted(leaders.values()) == [0, 0, 1, 1, 2, 2]  # Kafka's round robin: two each
    # Each partition's data lives in its leader's own data dir, and nowhere else.
    _produce(trafka_cluster, "spread", 60)
    data = trafka_cluster.data_dir
    for partition, leader in leaders.items():
        holders = [i for i in range(3) if (data / f"broker-{i}" / f"spread-{partition}").exists()]
        assert holders == [leader]


def test_an_idempotent_producer_and_a_consumer_group_work_across_the_brokers(trafka_cluster):
    _create(trafka_cluster, "orders", 6)
    _produce(trafka_cluster, "orders", 600, acks="all")
    values = _consume(trafka_cluster, "orders", 600, "billing")
    assert sorted(values) == sorted(b"value-%d" % i for i in range(600))
    # The group's offsets were committed to its coordinator, wherever it is, and are read back.
    assert _committed_total(trafka_cluster, "billing", "orders", 6) == 600


def test_a_groups_coordinator_is_the_leader_of_its_offsets_partition(trafka_cluster):
    """FindCoordinator names the broker leading the group's __consumer_offsets partition, and
    only that broker serves the group (the others say NOT_COORDINATOR)."""
    metadata = _admin(trafka_cluster).list_topics("__consumer_offsets", timeout=10)
    leaders = {p.id: p.leader for p in metadata.topics["__consumer_offsets"].partitions.values()}
    seen = set()
    for n in range(40):
        group = f"group-{n}"
        expected = leaders[partition_for(group, len(leaders))]
        with RawClient(trafka_cluster.bootstrap_servers.split(",")[0]) as client:
            found = client.request(10, 3, {"key": group, "key_type": 0})
        assert (found.error_code, found.node_id) == (0, expected)
        assert f"{found.host}:{found.port}" == trafka_cluster.broker_addresses[expected]
        seen.add(expected)
        other = (expected + 1) % 3
        with RawClient(trafka_cluster.broker_addresses[other]) as client:
            offsets = client.request(9, 5, {"group_id": group, "topics": None, "require_stable": False})
        assert offsets.error_code == ErrorCode.NOT_COORDINATOR
    assert seen == {0, 1, 2}


def test_a_broker_that_does_not_lead_a_partition_says_not_leader_or_follower(trafka_cluster):
    _create(trafka_cluster, "routed", 3)
    leaders = _leaders(trafka_cluster, "routed")
    partition, leader = 0, leaders[0]
    other = trafka_cluster.broker_addresses[(leader + 1) % 3]
    batch = records.encode_batch([records.Record(b"k", b"v", timestamp=1)])
    with RawClient(other) as client:
        produced = client.request(0, 8, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": "routed", "partition_data": [{"index": partition, "records": batch}]}]})
        assert produced.responses[0].partition_responses[0].error_code == NOT_LEADER
        fetched = client.request(1, 11, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic": "routed", "partitions": [
                {"partition": partition, "current_leader_epoch": -1, "fetch_offset": 0, "log_start_offset": -1,
                 "partition_max_bytes": 1 << 20}]}]})
        assert fetched.responses[0].partitions[0].error_code == NOT_LEADER
        listed = client.request(2, 5, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": "routed", "partitions": [{"partition_index": partition, "current_leader_epoch": -1,
                                               "timestamp": -1}]}]})
        assert listed.topics[0].partitions[0].error_code == NOT_LEADER
    with RawClient(trafka_cluster.broker_addresses[leader]) as client:
        produced = client.request(0, 8, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": "routed", "partition_data": [{"index": partition, "records": batch}]}]})
        assert produced.responses[0].partition_responses[0].error_code == 0


def test_kafka_python_producer_and_group_consumer(trafka_cluster):
    producer = KafkaProducer(bootstrap_servers=trafka_cluster.bootstrap_servers, acks="all")
    admin = KafkaAdminClient(bootstrap_servers=trafka_cluster.bootstrap_servers)
    try:
        from kafka.admin import NewTopic as KPNewTopic

        admin.create_topics([KPNewTopic("kp", 5, 1)])
    finally:
        admin.close()
    for i in range(200):
        producer.send("kp", b"m%d" % i)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer("kp", bootstrap_servers=trafka_cluster.bootstrap_servers, group_id="kp-group",
                             auto_offset_reset="earliest", consumer_timeout_ms=10_000)
    try:
        got = set()
        for message in consumer:
            got.add(message.value)
            if len(got) == 200:
                break
        consumer.commit()
    finally:
        consumer.close()
    assert got == {b"m%d" % i for i in range(200)}


def test_transactions_write_their_markers_to_each_partitions_leader(trafka_cluster):
    _create(trafka_cluster, "txn-in", 3)
    _create(trafka_cluster, "txn-out", 6)
    _produce(trafka_cluster, "txn-in", 30)
    producer = Producer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "transactional.id": "mover"})
    producer.init_transactions(10)
    consumer = Consumer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "group.id": "mover-group",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe(["txn-in"])
    moved = 0
    try:
        producer.begin_transaction()
        deadline = time.monotonic() + 30
        while moved < 30 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                producer.produce("txn-out", message.value(), partition=moved % 6)
                moved += 1
        producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                             consumer.consumer_group_metadata(), 10)
        producer.commit_transaction(10)
        producer.begin_transaction()
        for i in range(6):
            producer.produce("txn-out", b"aborted", partition=i)
        producer.abort_transaction(10)
    finally:
        consumer.close()
    assert moved == 30
    committed = _consume(trafka_cluster, "txn-out", 30, "reader", **{"isolation.level": "read_committed"})
    assert sorted(committed) == sorted(b"value-%d" % i for i in range(30))
    assert _committed_total(trafka_cluster, "mover-group", "txn-in", 3) == 30


def test_explicit_assignments_and_replication_factors(trafka_cluster):
    _create(trafka_cluster, "placed", 2, replica_assignment=[[2], [1]])
    assert _leaders(trafka_cluster, "placed") == {0: 2, 1: 1}
    with pytest.raises(KafkaException, match="larger than the 3 available brokers"):
        _create(trafka_cluster, "too-wide", 1, replication_factor=4)
    with pytest.raises(KafkaException, match="includes broker 7, but no broker with that ID is registered"):
        _create(trafka_cluster, "nowhere", 1, replica_assignment=[[7]])


def test_restarting_the_process_keeps_every_brokers_log_and_topic_changes(trafka_cluster):
    _create(trafka_cluster, "kept", 6, replica_assignment=[[i % 3] for i in range(5, -1, -1)])
    _create(trafka_cluster, "dropped", 2)
    _produce(trafka_cluster, "kept", 300)
    admin = _admin(trafka_cluster)
    admin.delete_topics(["dropped"])["dropped"].result(10)
    leaders = _leaders(trafka_cluster, "kept")
    trafka_cluster.restart(kill=True)
    assert _leaders(trafka_cluster, "kept") == leaders  # explicit assignments are durable
    assert "dropped" not in _admin(trafka_cluster).list_topics(timeout=10).topics
    for node in range(3):
        assert not list(Path(trafka_cluster.data_dir, f"broker-{node}").glob("dropped-*"))
    values = _consume(trafka_cluster, "kept", 300, f"after-restart-{uuid.uuid4().hex[:6]}")
    assert sorted(values) == sorted(b"value-%d" % i for i in range(300))


@pytest.mark.trafka_config({"cluster.brokers": 2, "cluster.broker.racks": "east,"})
def test_cluster_size_and_racks_are_settings(trafka_cluster):
    metadata = _admin(trafka_cluster).list_topics(timeout=10)
    assert sorted(metadata.brokers) == [0, 1]
    admin = KafkaAdminClient(bootstrap_servers=trafka_cluster.bootstrap_servers)
    try:
        racks = {b["broker_id"]: b["rack"] for b in admin.describe_cluster()["brokers"]}
    finally:
        admin.close()
    assert racks == {0: "east", 1: None}


def test_each_broker_describes_only_the_replicas_it_holds(trafka_cluster):
    _create(trafka_cluster, "dirs", 3, replication_factor=2)
    metadata = _admin(trafka_cluster).list_topics("dirs", timeout=10)
    held = {b: sorted(p.id for p in metadata.topics["dirs"].partitions.values() if b in p.replicas) for b in range(3)}
    for broker_id, address in trafka_cluster.broker_addresses.items():
        with RawClient(address) as client:
            body = client.request(35, 1, {"topics": None})
        [log_dir] = body.results
        assert log_dir.log_dir.endswith(f"broker-{broker_id}")
        listed = sorted(p.partition_index for t in log_dir.topics if t.name == "dirs" for p in t.partitions)
        assert listed == held[broker_id] and len(listed) == 2


def test_assignments_of_different_replication_factors_are_refused(trafka_cluster):
    with pytest.raises(KafkaException, match="inconsistent replication factor"):
        _create(trafka_cluster, "uneven", 2, replica_assignment=[[0, 1], [2]])
