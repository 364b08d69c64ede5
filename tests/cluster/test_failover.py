"""Brokers of a simulated cluster stop and start while real clients work (docs/cluster.md): an
idempotent acks=all producer and a consumer group carry on across a broker stopping (its
partitions' leaders and the group's coordinator move), nothing acknowledged is lost, nothing is
written twice, and each key's records stay in order."""

from __future__ import annotations

import time
from collections import defaultdict

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer, KafkaProducer

from testkit.cluster import read_from_start
from trafka.testing.rawwire import RawClient

TOPIC = "events"
PARTITIONS = 6
PER_ROUND = 600
KEYS = 12


def _create(cluster, name=TOPIC, partitions=PARTITIONS, replication=3, **configs) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    topic = NewTopic(name, partitions, replication, config={"min.insync.replicas": "2", **configs})
    for future in admin.create_topics([topic]).values():
        future.result(10)


def _partition_states(cluster, topic=TOPIC) -> dict[int, tuple[int, list[int], list[int]]]:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    metadata = admin.list_topics(topic, timeout=10)
    return {p.id: (p.leader, list(p.replicas), sorted(p.isrs)) for p in metadata.topics[topic].partitions.values()}


def _wait_in_sync(cluster, topic=TOPIC, brokers=3, timeout=20) -> None:
    deadline = time.monotonic() + timeout
    while True:
        states = _partition_states(cluster, topic)
        if all(len(isr) == brokers for _, _, isr in states.values()):
            return
        assert time.monotonic() < deadline, f"ISRs never refilled: {states}"
        time.sleep(0.1)


def _any_broker(cluster) -> RawClient:
    """A raw connection to the first broker that accepts one."""
    for address in cluster.bootstrap_servers.split(","):
        try:
            return RawClient(address)
        except OSError:
            continue
    raise AssertionError("no broker accepts connections")


def _coordinator(cluster, group: str) -> int:
    with _any_broker(cluster) as client:
        found = client.request(10, 3, {"key": group, "key_type": 0})
    assert found.error_code == 0
    return found.node_id


def _value(i: int) -> bytes:
    return b"%d:%06d" % (i % KEYS, i)


def _check_log(cluster, expected: int) -> None:
    """Read the whole topic from the beginning: each value once, each key's in order."""
    values = read_from_start(cluster.bootstrap_servers, TOPIC, PARTITIONS, expected, timeout=30, settle=1.0)
    assert len(values) == expected and len(set(values)) == expected  # none lost, none twice, no more
    by_key = defaultdict(list)
    for value in values:
        key, seq = value.split(b":")
        by_key[key].append(int(seq))
    assert all(seqs == sorted(seqs) for seqs in by_key.values())  # order kept per key (partition)


class ConfluentClients:
    def __init__(self, cluster, group):
        self.producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "enable.idempotence": True,
                                  "acks": "all", "linger.ms": 2})
        self.consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group,
                                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
        self.consumer.subscribe([TOPIC])
        self.acked = 0

    def produce(self, start: int, count: int) -> None:
        def delivered(error, _message):
            assert error is None, error
            self.acked += 1

        for i in range(start, start + count):
            self.producer.produce(TOPIC, _value(i), key=b"%d" % (i % KEYS), on_delivery=delivered)
            self.producer.poll(0)
        assert self.producer.flush(60) == 0

    def poll(self, seconds: float) -> list[bytes]:
        got, deadline = [], time.monotonic() + seconds
        while time.monotonic() < deadline:
            message = self.consumer.poll(0.1)
            if message is not None and message.error() is None:
                got.append(message.value())
        return got

    def commit(self) -> None:
        self.consumer.commit(asynchronous=False)

    def close(self) -> None:
        self.consumer.close()


class KafkaPythonClients:
    def __init__(self, cluster, group):
        self.producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all",
                                      enable_idempotence=True, retries=2147483647, linger_ms=2)
        self.consumer = KafkaConsumer(TOPIC, bootstrap_servers=cluster.bootstrap_servers, group_id=group,
                                      auto_offset_reset="earliest", enable_auto_commit=False)
        self.acked = 0

    def produce(self, start: int, count: int) -> None:
        futures = [self.producer.send(TOPIC, _value(i), key=b"%d" % (i % KEYS)) for i in range(start, start + count)]
        self.producer.flush(60)
        for future in futures:
            future.get(0)
            self.acked += 1

    def poll(self, seconds: float) -> list[bytes]:
        got, deadline = [], time.monotonic() + seconds
        while time.monotonic() < deadline:
            for records in self.consumer.poll(100).values():
                got.extend(r.value for r in records)
        return got

    def commit(self) -> None:
        self.consumer.commit()

    def close(self) -> None:
        self.producer.close()
        self.consumer.close()


class JavaClients:
    def __init__(self, cluster, group, kafka):
        self.producer = kafka.make_producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                                             "enable.idempotence": "true", "linger.ms": "2"})
        self.consumer = kafka.make_consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group,
                                             "auto.offset.reset": "earliest", "enable.auto.commit": "false"})
        self.consumer.subscribe([TOPIC])
        self.acked = 0

    def produce(self, start: int, count: int) -> None:
        futures = [self.producer.send_async(TOPIC, key=b"%d" % (i % KEYS), value=_value(i))
                   for i in range(start, start + count)]
        self.producer.flush()
        for future in futures:
            future.get(60)
            self.acked += 1

    def poll(self, seconds: float) -> list[bytes]:
        got, deadline = [], time.monotonic() + seconds
        while time.monotonic() < deadline:
            got.extend(r.value for r in self.consumer.poll(100))
        return got

    def commit(self) -> None:
        self.consumer.commitSync()

    def close(self) -> None:
        self.producer.close()
        self.consumer.close()


@pytest.fixture
def java_kafka():
    from testkit.java import running_jvm

    yield from running_jvm("4.3.0")


def _clients(name, cluster, group, request):
    if name == "confluent":
        return ConfluentClients(cluster, group)
    if name == "kafka-python":
        return KafkaPythonClients(cluster, group)
    return JavaClients(cluster, group, request.getfixturevalue("java_kafka"))


def _consume_until(clients, consumed: list[bytes], count: int, timeout: float = 30) -> None:
    """Poll into `consumed` until it holds `count` distinct values (or `timeout` passed)."""
    deadline = time.monotonic() + timeout
    while len(set(consumed)) < count and time.monotonic() < deadline:
        consumed += clients.poll(0.5)


@pytest.mark.parametrize("client", ["confluent", "kafka-python", "java"])
@pytest.mark.parametrize("kill", [False, True], ids=["stop", "kill"])
def test_producer_and_group_carry_on_while_the_coordinators_broker_stops_and_starts(trafka_cluster, client, kill,
                                                                                      request):
    _create(trafka_cluster)
    group = f"readers-{client}"
    clients = _clients(client, trafka_cluster, group, request)
    consumed: list[bytes] = []
    try:
        clients.produce(0, PER_ROUND)
        _consume_until(clients, consumed, PER_ROUND)
        clients.commit()
        victim = _coordinator(trafka_cluster, group)
        led_before = {p for p, (leader, _, _) in _partition_states(trafka_cluster).items() if leader == victim}
        assert led_before, "the victim leads some partitions"
        (trafka_cluster.kill_broker if kill else trafka_cluster.stop_broker)(victim)
        states = _partition_states(trafka_cluster)
        assert all(leader != victim and victim not in isr for leader, _, isr in states.values())
        assert _coordinator(trafka_cluster, group) != victim  # the group's coordinator moved
        clients.produce(PER_ROUND, PER_ROUND)
        _consume_until(clients, consumed, 2 * PER_ROUND)  # from the partitions' new leaders
        clients.commit()
        trafka_cluster.start_broker(victim)
        _wait_in_sync(trafka_cluster)
        clients.produce(2 * PER_ROUND, PER_ROUND)
        _consume_until(clients, consumed, 3 * PER_ROUND)
        clients.commit()
    finally:
        clients.close()
    assert clients.acked == 3 * PER_ROUND
    assert set(consumed) == {_value(i) for i in range(3 * PER_ROUND)}
    _check_log(trafka_cluster, 3 * PER_ROUND)


def test_not_enough_replicas_before_the_append(trafka_cluster):
    _create(trafka_cluster, "strict", 1, 3, **{"min.insync.replicas": "3"})
    leader = _partition_states(trafka_cluster, "strict")[0][0]
    follower = (leader + 1) % 3
    trafka_cluster.stop_broker(follower)
    from trafka.wire import records

    batch = records.encode_batch([records.Record(b"k", b"v", timestamp=1)])
    with RawClient(trafka_cluster.broker_addresses[leader]) as client:
        def produce(acks):
            body = client.request(0, 8, {"transactional_id": None, "acks": acks, "timeout_ms": 5000, "topic_data": [
                {"name": "strict", "partition_data": [{"index": 0, "records": batch}]}]})
            return body.responses[0].partition_responses[0]

        refused = produce(-1)
        assert refused.error_code == 19  # NOT_ENOUGH_REPLICAS: nothing was appended
        assert produce(1).base_offset == 0  # acks=1 does not ask for the ISR
    trafka_cluster.start_broker(follower)
    _wait_in_sync(trafka_cluster, "strict")
    with RawClient(trafka_cluster.broker_addresses[leader]) as client:
        body = client.request(0, 8, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": "strict", "partition_data": [{"index": 0, "records": batch}]}]})
    assert body.responses[0].partition_responses[0].error_code == 0


def test_an_acks_all_write_the_isr_lost_while_waiting_is_not_enough_replicas_after_append(trafka_cluster):
    """A follower stops fetching; the write waits for it; once it has lagged past
    replica.lag.time.max.ms it leaves the ISR, the write is in every remaining in-sync replica,
    but they are fewer than min.insync.replicas."""
    import threading

    from trafka.wire import records

    _create(trafka_cluster, "lagging", 1, 3, **{"min.insync.replicas": "3"})
    leader = _partition_states(trafka_cluster, "lagging")[0][0]
    follower = (leader + 1) % 3
    trafka_cluster.pause_replication(follower)
    answers = []

    def produce():
        with RawClient(trafka_cluster.broker_addresses[leader]) as client:
            body = client.request(0, 8, {"transactional_id": None, "acks": -1, "timeout_ms": 20000, "topic_data": [
                {"name": "lagging", "partition_data": [
                    {"index": 0, "records": records.encode_batch([records.Record(b"k", b"v", timestamp=1)])}]}]})
            answers.append(body.responses[0].partition_responses[0])

    writer = threading.Thread(target=produce)
    writer.start()
    time.sleep(0.5)
    assert not answers  # still waiting for the paused follower
    trafka_cluster.advance_clock(31_000)  # past replica.lag.time.max.ms (30 s)
    writer.join(10)
    assert answers and answers[0].error_code == 20  # NOT_ENOUGH_REPLICAS_AFTER_APPEND
    assert _partition_states(trafka_cluster, "lagging")[0][2] == sorted({0, 1, 2} - {follower})
    trafka_cluster.resume_replication(follower)
    _wait_in_sync(trafka_cluster, "lagging")


def test_a_follower_that_was_behind_is_truncated_to_the_new_leaders_log(trafka_cluster):
    """The leader takes writes its follower never copied (acks=1), then dies; the follower,
    still in the ISR, leads under a new epoch and takes other writes. When the old leader
    returns it cuts its log back to where the epochs agree and copies the new leader's."""
    _create(trafka_cluster, "diverge", 1, 2, **{"min.insync.replicas": "1"})
    old_leader, replicas, _ = _partition_states(trafka_cluster, "diverge")[0]
    new_leader = next(r for r in replicas if r != old_leader)
    producer = Producer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "acks": "1"})
    for i in range(10):
        producer.produce("diverge", b"common-%d" % i)
    assert producer.flush(10) == 0
    _wait_in_sync(trafka_cluster, "diverge", brokers=2)
    trafka_cluster.pause_replication(new_leader)
    for i in range(5):
        producer.produce("diverge", b"lost-%d" % i)
    assert producer.flush(10) == 0
    trafka_cluster.kill_broker(old_leader)
    trafka_cluster.resume_replication(new_leader)
    assert _partition_states(trafka_cluster, "diverge")[0][0] == new_leader
    for i in range(3):
        producer.produce("diverge", b"after-%d" % i)
    assert producer.flush(10) == 0
    trafka_cluster.start_broker(old_leader)
    _wait_in_sync(trafka_cluster, "diverge", brokers=2)
    expected = [b"common-%d" % i for i in range(10)] + [b"after-%d" % i for i in range(3)]
    # Read it from the returning broker itself once it leads again.
    trafka_cluster.move_leader("diverge", 0, old_leader)
    assert _partition_states(trafka_cluster, "diverge")[0][0] == old_leader
    assert read_from_start(trafka_cluster.bootstrap_servers, "diverge", 1, len(expected)) == expected
    segment_bytes = b"".join(p.read_bytes() for p in
                             (trafka_cluster.data_dir / f"broker-{old_leader}" / "diverge-0").glob("*.log"))
    assert b"lost-" not in segment_bytes and b"after-2" in segment_bytes


def test_with_only_the_leader_in_sync_acks_all_writes_and_reads_go_on(trafka_cluster):
    """min.insync.replicas=1 and both followers stopped: the leader alone is the ISR, so its
    high watermark is its log end; writes are acknowledged and read at once."""
    _create(trafka_cluster, "alone", 1, 3, **{"min.insync.replicas": "1"})
    leader = _partition_states(trafka_cluster, "alone")[0][0]
    for follower in sorted({0, 1, 2} - {leader}):
        trafka_cluster.stop_broker(follower)
    assert _partition_states(trafka_cluster, "alone")[0][2] == [leader]
    producer = Producer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "acks": "all",
                         "message.timeout.ms": 10000})
    for i in range(20):
        producer.produce("alone", b"a-%d" % i)
    assert producer.flush(15) == 0
    assert read_from_start(trafka_cluster.bootstrap_servers, "alone", 1, 20, timeout=10) == [b"a-%d" % i for i in range(20)]


def test_a_follower_truncates_when_a_new_leader_has_not_its_records(trafka_cluster):
    """A running follower that copied records the next leader never had: when the leader epoch
    moves, it cuts back to where its epochs agree with the new leader before fetching, even
    when both logs end at the same offset."""
    _create(trafka_cluster, "moving-on", 1, 3, **{"min.insync.replicas": "1"})
    first, second, third = _partition_states(trafka_cluster, "moving-on")[0][1]
    producer = Producer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "acks": "1"})
    for i in range(5):
        producer.produce("moving-on", b"common-%d" % i)
    assert producer.flush(10) == 0
    _wait_in_sync(trafka_cluster, "moving-on")
    trafka_cluster.pause_replication(third)
    for i in range(4):
        producer.produce("moving-on", b"old-%d" % i)  # the second replica copies them, the third does not
    assert producer.flush(10) == 0
    deadline = time.monotonic() + 10
    while trafka_cluster.partition_state("moving-on", 0)["leader"] == first and time.monotonic() < deadline:
        log = trafka_cluster.data_dir / f"broker-{second}" / "moving-on-0"
        if b"old-3" in b"".join(p.read_bytes() for p in log.glob("*.log")):
            break
        time.sleep(0.05)
    trafka_cluster.stop_broker(first)
    trafka_cluster.pause_replication(second)  # it does not fetch until the new leader wrote
    trafka_cluster.move_leader("moving-on", 0, third)  # in sync still, but without the old records
    trafka_cluster.resume_replication(third)
    for i in range(4):
        producer.produce("moving-on", b"new-%d" % i)  # the same offsets the old records had
    assert producer.flush(10) == 0
    trafka_cluster.resume_replication(second)  # its log ends where the leader's does, but differs

    def segments(node):
        return b"".join(p.read_bytes() for p in sorted((trafka_cluster.data_dir / f"broker-{node}" / "moving-on-0").glob("*.log")))

    deadline = time.monotonic() + 10
    while segments(second) != segments(third) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert segments(second) == segments(third)
    assert b"old-" not in segments(second) and b"new-3" in segments(second)
