"""Static members' sessions through real clients, on the broker clock: three static members
(session.timeout.ms 5000) of librdkafka or kafka-python read 4,000 records and close. A static
member sends no LeaveGroup, so only its session removes it, counted as Kafka counts it from
the member's last request (librdkafka's is the OffsetCommit close() sends): still a member
4.5 s of broker time later, gone by 5.5 s, when DeleteGroups succeeds (librdkafka's test 0081
sleeps 6 s and expects it to)."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer

from testkit.groups import create_topic, produce
from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient

SESSION_MS, RECORDS, MEMBERS = 5000, 4000, 3


@pytest.fixture
def broker(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", config={"offsets.topic.num.partitions": 3,
                                                          "group.initial.rebalance.delay.ms": 0}) as running:
        yield running


def librdkafka_member(bootstrap, group, instance):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.instance.id": instance,
                         "session.timeout.ms": SESSION_MS, "auto.offset.reset": "earliest"})
    consumer.subscribe(["liveness"])

    def poll():
        return [m.value() for m in consumer.consume(1000, 0.05) if not m.error()]
    return consumer, poll


def kafka_python_member(bootstrap, group, instance):
    consumer = KafkaConsumer("liveness", bootstrap_servers=bootstrap, group_id=group, group_instance_id=instance,
                             session_timeout_ms=SESSION_MS, heartbeat_interval_ms=1000, auto_offset_reset="earliest")

    def poll():
        return [r.value for records in consumer.poll(50, max_records=1000).values() for r in records]
    return consumer, poll


def describe(broker, group):
    with RawClient(broker.bootstrap_servers) as raw:
        [described] = raw.request(15, 5, {"groups": [group], "include_authorized_operations": False}).groups
    return described.group_state, len(described.members)


@pytest.mark.parametrize("member", [librdkafka_member, kafka_python_member], ids=["librdkafka", "kafka-python"])
def test_static_members_leave_a_session_after_their_last_request(broker, member):
    create_topic(broker.bootstrap_servers, "liveness", 4)
    produce(broker.bootstrap_servers, "liveness", [f"r{i}" for i in range(RECORDS)])
    members = [member(broker.bootstrap_servers, "static", f"i{i}") for i in range(MEMBERS)]
    seen: set[bytes] = set()
    deadline = time.monotonic() + 60
    try:
        while len(seen) < RECORDS and time.monotonic() < deadline:
            for _, poll in members:
                seen.update(poll())
        assert len(seen) == RECORDS
        while describe(broker, "static") != ("Stable", MEMBERS) and time.monotonic() < deadline:
            for _, poll in members:  # the last joins' rebalance may still be going on
                poll()
        assert describe(broker, "static") == ("Stable", MEMBERS)
    finally:
        closing = time.monotonic()  # the first member's last request (its close) comes after this
        for consumer, _ in members:
            consumer.close()
    # Broker time runs on with the wall clock: what the closes took counts against the first
    # member's session, so the clock moves to 500 ms before it ends, not 4.5 s past the closes.
    closed_ms = int((time.monotonic() - closing) * 1000)
    broker.advance_clock(max(SESSION_MS - 500 - closed_ms, 0))
    assert describe(broker, "static") == ("Stable", MEMBERS)
    broker.advance_clock(1000 + closed_ms)  # past the last member's session
    deadline = time.monotonic() + 5
    while describe(broker, "static")[0] != "Empty" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert describe(broker, "static") == ("Empty", 0)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.delete_consumer_groups(["static"])["static"].result(10)
