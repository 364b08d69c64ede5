"""KIP-848 regex subscriptions under ACLs: as in Kafka 4.0.1+, a member's SubscribedTopicRegex
resolves only to the topics its principal may DESCRIBE. confluent-kafka (group.protocol=consumer)
over SASL_PLAINTEXT subscribes to `^prefix-.*`; alice may describe two of the three matching
topics and is assigned only theirs, then the third once she may describe it too. After a
restart, a member that has not heartbeated yet keeps to the group's earlier topics."""

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


def _heartbeat(raw, group: str, member_id: str, regex: str, epoch: int = 0):
    return raw.request(68, 1, {"group_id": group, "member_id": member_id, "member_epoch": epoch, "instance_id": None,
                               "rack_id": None, "rebalance_timeout_ms": 60000, "subscribed_topic_names": None,
                               "subscribed_topic_regex": regex, "server_assignor": None, "topic_partitions": []})


def test_after_a_restart_a_regex_keeps_to_its_topics_until_the_member_heartbeats(broker):
    """A member restored from `__consumer_offsets` has not yet heartbeated, so no principal is
    known for it: its regex keeps to the group's topics from before the restart (Kafka keeps its
    last resolution), and a topic created since that nobody in the group may describe is not
    assigned when another member joins."""
    from trafka.testing.rawwire import RawClient

    prefix = unique("rr")
    group, regex = prefix + "-group", f"{prefix}-.*"
    admin = confluent_admin(broker)
    for future in admin.create_topics([NewTopic(f"{prefix}-a", 1)]).values():
        future.result(30)
    allow(admin, "User:ANONYMOUS", "GROUP", group, "READ")  # the PLAINTEXT listener's principal
    allow(admin, "User:ANONYMOUS", "TOPIC", f"{prefix}-a", "DESCRIBE")
    with RawClient(broker.bootstrap("PLAINTEXT")) as raw:
        first = _heartbeat(raw, group, "member-1", regex)
        assert first.error_code == 0 and first.assignment.topic_partitions == []  # the regex is resolved after it
        resolved = _heartbeat(raw, group, "member-1", regex, first.member_epoch)
        assert resolved.error_code == 0 and len(resolved.assignment.topic_partitions) == 1

    broker.restart()
    admin = confluent_admin(broker)
    for future in admin.create_topics([NewTopic(f"{prefix}-b", 1)]).values():
        future.result(30)
    with RawClient(broker.bootstrap("PLAINTEXT")) as raw:
        assert _heartbeat(raw, group, "member-2", regex).error_code == 0
        described = raw.request(69, 0, {"group_ids": [group], "include_authorized_operations": False}).groups[0]
    assert described.error_code == 0 and {m.member_id for m in described.members} == {"member-1", "member-2"}
    targets = {tp.topic_name for m in described.members for tp in m.target_assignment.topic_partitions}
    assert targets == {f"{prefix}-a"}
