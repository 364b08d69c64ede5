"""Offsets committed without group membership (assign() + commit, generation -1): Kafka accepts
them on a missing or empty group whatever member id comes with them, with either protocol, and
checks the topic and partition before it looks at the group. librdkafka with
group.protocol=consumer sends the member id it made itself; trafka answered UNKNOWN_MEMBER_ID."""

from __future__ import annotations

import uuid

import pytest

from trafka.testing.rawwire import RawClient


def _topic(broker, name: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    for future in admin.create_topics([NewTopic(name, 2)]).values():
        future.result(30)


@pytest.mark.parametrize("protocol", ["consumer", "classic"])
def test_confluent_kafka_commits_without_subscribing(trafka_broker, protocol):
    from confluent_kafka import Consumer, TopicPartition

    topic, group = f"simple-{uuid.uuid4().hex[:8]}", f"simple-group-{protocol}"
    _topic(trafka_broker, topic)
    consumer = Consumer({"bootstrap.servers": trafka_broker.bootstrap_servers, "group.id": group,
                         "group.protocol": protocol, "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        consumer.commit(offsets=[TopicPartition(topic, 0, 5), TopicPartition(topic, 1, 7)], asynchronous=False)
        committed = consumer.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)], timeout=30)
        assert [(tp.partition, tp.offset) for tp in committed] == [(0, 5), (1, 7)]
    finally:
        consumer.close()


def test_an_unknown_topic_is_answered_before_the_group(trafka_broker):
    topic = f"simple-{uuid.uuid4().hex[:8]}"
    _topic(trafka_broker, topic)
    with RawClient(trafka_broker.bootstrap_servers, "simple") as raw:
        answer = raw.request(8, 8, {
            "group_id": "simple-unknown-topic", "generation_id_or_member_epoch": -1, "member_id": "self-made",
            "group_instance_id": None, "topics": [
                {"name": "no-such-topic", "partitions": [{"partition_index": 0, "committed_offset": 1}]},
                {"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 3},
                                               {"partition_index": 9, "committed_offset": 3}]}]})
    errors = [(t.name, p.partition_index, p.error_code) for t in answer.topics for p in t.partitions]
    assert errors == [("no-such-topic", 0, 3), (topic, 0, 0), (topic, 9, 3)]
