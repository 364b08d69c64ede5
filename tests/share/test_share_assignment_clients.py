"""Share-group assignment through confluent-kafka's ShareConsumer against a broker process:
members get disjoint shares of a topic's partitions (Kafka's SimpleAssignor), each member only
ever receives records of the partitions it was assigned, the work splits evenly, and a member
leaving hands its partitions to the others without a record accepted twice. librdkafka's test
0172 found the old every-member-every-partition assignment: one member's first fetch took all
the records and the other never got any."""

from __future__ import annotations

import time

from confluent_kafka import AcknowledgeType, Producer, ShareConsumer

from testkit.groups import create_topic, share_from_earliest
from trafka.testing.rawwire import RawClient

PARTITIONS, PER_PARTITION = 6, 1000


def share_consumer(broker, client_id: str) -> ShareConsumer:
    consumer = ShareConsumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "spread",
                              "client.id": client_id, "share.acknowledgement.mode": "explicit"})
    consumer.subscribe(["spread"])
    return consumer


def assignments(broker) -> dict[str, set[int]]:
    """client id -> the partitions ShareGroupDescribe says its member is assigned."""
    with RawClient(broker.bootstrap_servers) as raw:
        [described] = raw.request(77, 1, {"group_ids": ["spread"], "include_authorized_operations": False}).groups
    if described.error_code:
        return {}
    return {m.client_id: {p for t in m.assignment.topic_partitions for p in t.partitions} for m in described.members}


def wait_for_split(broker, consumers: dict[str, ShareConsumer], sizes: list[int]) -> dict[str, set[int]]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        held = assignments(broker)
        if set(held) == set(consumers) and sorted(len(p) for p in held.values()) == sizes:
            return held
        for consumer in consumers.values():
            consumer.poll(0.2)
    raise AssertionError(f"assignment never became {sizes}: {assignments(broker)}")


def settle(consumers: dict[str, ShareConsumer], heartbeats: int = 3) -> None:
    """Poll a few heartbeat intervals (500 ms here) more, before any record exists: a member
    learns its new assignment at its next heartbeat, and until then fetches what it held
    before (a first member held every partition), as a Kafka broker would serve it."""
    until = time.monotonic() + heartbeats * 0.5
    while time.monotonic() < until:
        for consumer in consumers.values():
            assert not consumer.poll(0.1), "a record before any was produced"


def produce_everywhere(broker) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 5})
    for i in range(PER_PARTITION):
        for p in range(PARTITIONS):
            producer.produce("spread", b"job-%d-%d" % (p, i), partition=p)
    assert producer.flush(30) == 0


def consume(consumers, accepted, held, until, deadline_s=60):
    """Poll every consumer, accepting each record; a record of a partition its member was not
    assigned, or accepted twice, fails."""
    deadline = time.monotonic() + deadline_s
    while not until() and time.monotonic() < deadline:
        for name, consumer in consumers.items():
            for message in consumer.poll(0.2) or []:
                assert message.error() is None, message.error()
                key = (message.partition(), message.offset())
                assert message.partition() in held[name], f"{name} got partition {message.partition()}, assigned {held[name]}"
                assert key not in accepted, f"{key} accepted by {accepted[key]} and {name}"
                accepted[key] = name
                consumer.acknowledge(message, AcknowledgeType.ACCEPT)


def test_members_get_disjoint_partitions_and_the_work_splits(long_lock_broker):
    """Six partitions of 1,000 records each, three members: two partitions each, no partition
    twice; each member receives only its own partitions' records, 2,000 each. Then one member
    closes: the other two get three partitions each (keeping their own) and finish the rest."""
    broker = long_lock_broker
    create_topic(broker.bootstrap_servers, "spread", PARTITIONS)
    consumers = {name: share_consumer(broker, name) for name in ("a", "b", "c")}
    held = wait_for_split(broker, consumers, [2, 2, 2])
    assert set().union(*held.values()) == set(range(PARTITIONS))
    settle(consumers)
    share_from_earliest(broker.bootstrap_servers, "spread")
    produce_everywhere(broker)
    accepted: dict[tuple[int, int], str] = {}
    consume(consumers, accepted, held, until=lambda: len(accepted) >= PARTITIONS * PER_PARTITION // 2)
    per_member = {name: sum(1 for owner in accepted.values() if owner == name) for name in consumers}
    assert all(count > 0 for count in per_member.values()), per_member

    consumers.pop("c").close()
    before = held
    held = wait_for_split(broker, consumers, [3, 3])
    assert all(before[name] <= held[name] for name in consumers), (before, held)
    consume(consumers, accepted, held, until=lambda: len(accepted) == PARTITIONS * PER_PARTITION)
    for consumer in consumers.values():
        consumer.close()
    assert sorted(accepted) == [(p, o) for p in range(PARTITIONS) for o in range(PER_PARTITION)]


def test_two_members_each_fetch_their_own_partition(long_lock_broker):
    """librdkafka 0172's shape: two members, a two-partition topic, 400 records: each member
    is given one partition and receives its 200 records; neither takes the other's."""
    broker = long_lock_broker
    create_topic(broker.bootstrap_servers, "spread", 2)
    consumers = {name: share_consumer(broker, name) for name in ("a", "b")}
    held = wait_for_split(broker, consumers, [1, 1])
    settle(consumers)
    share_from_earliest(broker.bootstrap_servers, "spread")
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for i in range(400):
        producer.produce("spread", b"%d" % i, partition=i % 2)
    assert producer.flush(30) == 0
    accepted: dict[tuple[int, int], str] = {}
    consume(consumers, accepted, held, until=lambda: len(accepted) == 400)
    for consumer in consumers.values():
        consumer.close()
    assert sorted(accepted) == [(p, o) for p in range(2) for o in range(200)]
    assert list(accepted.values()).count("a") == 200 and list(accepted.values()).count("b") == 200
