"""Coordinators live on the leader of their internal-topic partition and move with it: a
transactional producer and a share group keep working when their coordinator's broker stops
(docs/cluster.md)."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, NewTopic

from testkit.cluster import read_from_start
from testkit.groups import share_from_earliest
from trafka.testing.rawwire import RawClient

GROUP_KEY, TRANSACTION_KEY = 0, 1


def _create(cluster, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    for future in admin.create_topics([NewTopic(name, partitions, 3, config={"min.insync.replicas": "2"})]).values():
        future.result(10)


def _coordinator(cluster, key: str, key_type: int) -> int:
    for address in cluster.bootstrap_servers.split(","):
        try:
            with RawClient(address) as client:
                found = client.request(10, 3, {"key": key, "key_type": key_type})
        except OSError:
            continue
        assert found.error_code == 0
        return found.node_id
    raise AssertionError("no broker answers")


def _read_committed(cluster, topic: str, partitions: int, want: int) -> list[bytes]:
    return read_from_start(cluster.bootstrap_servers, topic, partitions, want, settle=1.0,
                           **{"isolation.level": "read_committed"})


@pytest.mark.parametrize("kill", [False, True], ids=["stop", "kill"])
def test_a_transactional_producer_carries_on_after_its_coordinator_moves(trafka_cluster, kill):
    _create(trafka_cluster, "payments", 3)
    producer = Producer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "transactional.id": "ledger"})
    producer.init_transactions(20)

    def transaction(tag: bytes, commit: bool) -> None:
        producer.begin_transaction()
        for i in range(30):
            producer.produce("payments", b"%s-%d" % (tag, i), partition=i % 3)
        (producer.commit_transaction if commit else producer.abort_transaction)(30)

    transaction(b"first", True)
    coordinator = _coordinator(trafka_cluster, "ledger", TRANSACTION_KEY)
    (trafka_cluster.kill_broker if kill else trafka_cluster.stop_broker)(coordinator)
    assert _coordinator(trafka_cluster, "ledger", TRANSACTION_KEY) != coordinator
    transaction(b"second", True)
    transaction(b"dropped", False)
    trafka_cluster.start_broker(coordinator)
    transaction(b"third", True)
    values = _read_committed(trafka_cluster, "payments", 3, 90)
    assert sorted(values) == sorted(b"%s-%d" % (tag, i) for tag in (b"first", b"second", b"third") for i in range(30))


def test_a_java_transactional_producer_carries_on_after_its_coordinator_moves(trafka_cluster, java_kafka):
    from testkit.clients.java import JavaTxn

    _create(trafka_cluster, "orders", 1)
    txn = JavaTxn(java_kafka, trafka_cluster.bootstrap_servers, "java-ledger", 60000)
    try:
        txn.init()
        txn.begin()
        for i in range(10):
            txn.send("orders", b"before-%d" % i)
        txn.commit()
        trafka_cluster.stop_broker(_coordinator(trafka_cluster, "java-ledger", TRANSACTION_KEY))
        txn.begin()
        for i in range(10):
            txn.send("orders", b"after-%d" % i)
        txn.commit()
    finally:
        txn.close()
    values = _read_committed(trafka_cluster, "orders", 1, 20)
    assert sorted(values) == sorted([b"before-%d" % i for i in range(10)] + [b"after-%d" % i for i in range(10)])


@pytest.fixture
def java_kafka():
    from testkit.java import running_jvm

    yield from running_jvm("4.3.0")


@pytest.mark.trafka_config({"group.share.heartbeat.interval.ms": 500})
def test_a_share_group_carries_on_after_its_coordinator_moves(trafka_cluster):
    _create(trafka_cluster, "jobs", 1)
    consumer = ShareConsumer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "group.id": "workers"})
    consumer.subscribe(["jobs"])
    producer = Producer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "acks": "all"})

    def poll_values(want: int) -> list[bytes]:
        got, deadline = [], time.monotonic() + 30
        while len(got) < want and time.monotonic() < deadline:
            for message in consumer.poll(0.3) or []:
                if message.error() is None:
                    got.append(message.value())
        return got

    # The share-partition starts at the log end (share.auto.offset.reset=latest): join first.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        consumer.poll(0.3)
        with RawClient(trafka_cluster.broker_addresses[_coordinator(trafka_cluster, "workers", GROUP_KEY)]) as raw:
            [group] = raw.request(77, 1, {"group_ids": ["workers"], "include_authorized_operations": False}).groups
        if group.error_code == 0 and group.members and group.members[0].assignment.topic_partitions:
            consumer.poll(0.5)
            break
    for i in range(20):
        producer.produce("jobs", b"early-%d" % i)
    assert producer.flush(10) == 0
    early = poll_values(20)
    assert sorted(early) == sorted(b"early-%d" % i for i in range(20))
    consumer.poll(0.5)  # acknowledges them (implicit mode: at the next poll)
    coordinator = _coordinator(trafka_cluster, "workers", GROUP_KEY)
    trafka_cluster.stop_broker(coordinator)
    assert _coordinator(trafka_cluster, "workers", GROUP_KEY) != coordinator
    for i in range(20):
        producer.produce("jobs", b"late-%d" % i)
    assert producer.flush(20) == 0
    late = poll_values(20)
    consumer.close()
    assert sorted(set(late)) == sorted(b"late-%d" % i for i in range(20))  # acknowledged ones never came back


@pytest.mark.trafka_config({"group.share.heartbeat.interval.ms": 500})
def test_a_java_share_consumer_carries_on_after_its_coordinator_moves(trafka_cluster, java_kafka):
    """KafkaShareConsumer (Java 4.3, explicit acknowledgement): every record once, across the
    share group's coordinator stopping (its group and share-partition state move)."""
    from testkit.java import share_consumer, share_reset_earliest

    _create(trafka_cluster, "tasks", 1)
    k = java_kafka
    jvm, call = k.jvm, k.call
    admin = k.make_admin({"bootstrap.servers": trafka_cluster.bootstrap_servers})
    share_reset_earliest(k, admin, "java-workers")
    admin.close()
    producer = Producer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "acks": "all"})
    for i in range(10):
        producer.produce("tasks", b"t-%d" % i)
    assert producer.flush(10) == 0
    share = share_consumer(k, trafka_cluster.bootstrap_servers, "java-workers", "tasks", explicit=True)
    accept = jvm.org.apache.kafka.clients.consumer.AcknowledgeType.ACCEPT
    seen: list[bytes] = []

    def poll_until(count: int) -> None:
        deadline = time.monotonic() + 60
        while len(seen) < count:
            assert time.monotonic() < deadline, f"seen so far: {seen}"
            records = call(share.poll, jvm.java.time.Duration.ofMillis(300))
            iterator = call(records.iterator)
            while call(iterator.hasNext):
                record = call(iterator.next)
                seen.append(bytes(call(record.value)))
                call(share.acknowledge, record, accept)
            call(share.commitSync)

    try:
        poll_until(10)
        coordinator = _coordinator(trafka_cluster, "java-workers", GROUP_KEY)
        trafka_cluster.stop_broker(coordinator)
        for i in range(10, 20):
            producer.produce("tasks", b"t-%d" % i)
        assert producer.flush(20) == 0
        poll_until(20)
    finally:
        # Its share session with the stopped broker (when that led the partition) cannot be
        # closed: the client would wait out its default 30 s for it.
        call(share.close, jvm.java.time.Duration.ofSeconds(2))
    assert sorted(seen) == sorted(b"t-%d" % i for i in range(20))


@pytest.mark.trafka_config({"group.share.heartbeat.interval.ms": 500, "group.share.delivery.count.limit": 2,
                            "group.share.record.lock.duration.ms": 1500,
                            "share.coordinator.state.topic.num.partitions": 3})
def test_a_poison_record_keeps_its_delivery_count_when_the_share_coordinator_moves(trafka_cluster):
    """delivery.count.limit 2: a record acquired once whose lock ran out (the broker clock moved:
    the lock timer releases it and writes the share-partition's state), then the broker holding
    that state stops: on the new leader of its `__share_group_state` partition the record's next
    delivery is its second, and released then it is archived for good."""
    from confluent_kafka import AcknowledgeType

    from trafka.broker.coordinators.runtime.internal_topic import partition_for
    from trafka.wire.types import ZERO_UUID

    cluster = trafka_cluster
    _create(cluster, "poison", 1)
    share_from_earliest(cluster.bootstrap_servers, "p")
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    producer.produce("poison", b"poison", partition=0)
    assert producer.flush(10) == 0
    leader = cluster.partition_state("poison", 0)["leader"]
    with RawClient(cluster.broker_addresses[leader]) as raw:
        topic_id = raw.request(3, 12, {"topics": [{"name": "poison", "topic_id": ZERO_UUID}], "allow_auto_topic_creation": False,
                                       "include_topic_authorized_operations": False}).topics[0].topic_id
        held = raw.request(78, 1, {"group_id": "p", "member_id": "doomed", "share_session_epoch": 0, "max_wait_ms": 3000,
                                   "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 10, "batch_size": 10,
                                   "forgotten_topics_data": [], "topics": [{"topic_id": topic_id, "partitions": [
                                       {"partition_index": 0, "acknowledgement_batches": []}]}]})
        assert [(a.first_offset, a.delivery_count) for t in held.responses for p in t.partitions
                for a in p.acquired_records] == [(0, 1)]
    cluster.advance_clock(1501)
    state_partition = partition_for(f"p:{topic_id}:0", 3)
    holder = cluster.partition_state("__share_group_state", state_partition)["leader"]
    cluster.stop_broker(holder)
    assert cluster.partition_state("__share_group_state", state_partition)["leader"] not in (holder, -1)
    consumer = ShareConsumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "p",
                              "share.acknowledgement.mode": "explicit"})
    consumer.subscribe(["poison"])
    got, deadline = [], time.monotonic() + 30
    while not got and time.monotonic() < deadline:
        got = [m for m in consumer.poll(0.5) or [] if m.error() is None]
    assert [(m.offset(), m.delivery_count()) for m in got] == [(0, 2)]
    consumer.acknowledge(got[0], AcknowledgeType.RELEASE)
    consumer.commit_sync(10)
    producer.produce("poison", b"healthy", partition=0)
    assert producer.flush(10) == 0
    later, deadline = [], time.monotonic() + 20
    while not later and time.monotonic() < deadline:
        later = [m for m in consumer.poll(0.5) or [] if m.error() is None]
    assert [(m.value(), m.delivery_count()) for m in later] == [(b"healthy", 1)]
    consumer.acknowledge(later[0])
    consumer.commit_sync(10)
    assert not consumer.poll(2), "the archived record came back"
    consumer.close()


def test_share_fetch_names_the_partition_leader_and_its_epoch(trafka_cluster):
    """ShareFetch answers with the partition's current leader and leader epoch (after a leader
    move, not 0), and a broker that does not lead the partition answers NOT_LEADER_OR_FOLLOWER
    with the leader to go to."""
    from trafka.wire.types import ZERO_UUID

    cluster = trafka_cluster
    _create(cluster, "led", 1)
    state = cluster.partition_state("led", 0)
    new_leader = next(r for r in state["isr"] if r != state["leader"])
    moved = cluster.move_leader("led", 0, new_leader)
    epoch = cluster.partition_state("led", 0)["leader_epoch"]
    assert epoch >= 1, moved
    follower = next(r for r in state["replicas"] if r != new_leader)

    def share_fetch(node: int):
        with RawClient(cluster.broker_addresses[node]) as raw:
            topic_id = raw.request(3, 12, {"topics": [{"name": "led", "topic_id": ZERO_UUID}], "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": False}).topics[0].topic_id
            answer = raw.request(78, 1, {"group_id": "leaders", "member_id": f"m{node}", "share_session_epoch": 0,
                                         "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 10,
                                         "batch_size": 10, "forgotten_topics_data": [], "topics": [
                                             {"topic_id": topic_id, "partitions": [{"partition_index": 0,
                                                                                    "acknowledgement_batches": []}]}]})
        [[partition]] = [t.partitions for t in answer.responses]
        return partition.error_code, partition.current_leader.leader_id, partition.current_leader.leader_epoch

    share_from_earliest(cluster.bootstrap_servers, "leaders")
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    producer.produce("led", b"x", partition=0)
    assert producer.flush(10) == 0
    assert share_fetch(follower) == (6, new_leader, epoch)  # NOT_LEADER_OR_FOLLOWER, go to the leader
    assert share_fetch(new_leader)[1:] == (new_leader, epoch)
