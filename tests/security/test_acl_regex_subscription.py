"""KIP-848 regex subscriptions under ACLs: as in Kafka 4.0.1+, a member's SubscribedTopicRegex
resolves only to the topics its principal may DESCRIBE. confluent-kafka (group.protocol=consumer)
over SASL_PLAINTEXT subscribes to `^prefix-.*`; alice may describe two of the three matching
topics and is assigned only theirs, then the third once she may describe it too."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import NewTopic
from testkit.acl import acl_broker, allow, confluent_admin, login, unique
from testkit.security import confluent_config

from trafka.testing.waiting import wait_until


@pytest.fixture
def broker(tmp_path):
    broker = acl_broker(tmp_path / "data")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def test_regex_resolves_only_to_topics_the_member_may_describe(broker):
    prefix = unique("rx")
    admin = confluent_admin(broker)
    counts = {f"{prefix}-a": 2, f"{prefix}-b": 1, f"{prefix}-c": 1}
    for future in admin.create_topics([NewTopic(name, n) for name, n in counts.items()]).values():
        future.result(30)
    allow(admin, "User:alice", "GROUP", prefix, "READ", pattern="PREFIXED")
    allow(admin, "User:alice", "TOPIC", f"{prefix}-a", "DESCRIBE")
    allow(admin, "User:alice", "TOPIC", f"{prefix}-b", "DESCRIBE")

    consumer = Consumer({"bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"), **confluent_config(login("alice")),
                         "group.id": prefix + "-group", "group.protocol": "consumer", "enable.auto.commit": False})
    try:
        consumer.subscribe([f"^{prefix}-.*"])  # librdkafka sends a ^ subscription to the broker as a regex

        def assigned(expected):
            """The client's assignment and the broker's (ConsumerGroupDescribe, as the super user):
            librdkafka cannot name a topic alice may not describe, so the broker's view counts."""
            def check():
                consumer.poll(0.05)
                described = admin.describe_consumer_groups([prefix + "-group"])[prefix + "-group"].result(30)
                on_broker = {(tp.topic, tp.partition) for m in described.members for tp in m.assignment.topic_partitions}
                return {(tp.topic, tp.partition) for tp in consumer.assignment()} == on_broker == expected
            return check

        allowed = {(f"{prefix}-a", 0), (f"{prefix}-a", 1), (f"{prefix}-b", 0)}
        wait_until(assigned(allowed), 60, "alice is assigned the two topics she may describe")

        allow(admin, "User:alice", "TOPIC", f"{prefix}-c", "DESCRIBE")
        wait_until(assigned(allowed | {(f"{prefix}-c", 0)}), 60, "the third topic once she may describe it")
    finally:
        consumer.close()
