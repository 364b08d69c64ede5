"""Internal topics are Kafka's Topic.INTERNAL_TOPICS (__consumer_offsets, __transaction_state,
__share_group_state), not every name starting with "__": Debezium's heartbeat topics
(`__debezium-heartbeat.<prefix>`) and a user's own `__` topics are ordinary topics, as in Kafka.
Metadata and DescribeTopicPartitions mark only the three internal, so a client's pattern
subscription (exclude.internal.topics, on by default) reads the others, and DeleteTopics deletes
them. (trafka still refuses to delete the three: docs/compatibility.md.) Real clients."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer, KafkaProducer

from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_until

HEARTBEATS = "__debezium-heartbeat.inventory"


def test_double_underscore_topics_are_ordinary_topics(trafka_broker):
    bootstrap = trafka_broker.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(HEARTBEATS, 1, 1)])[HEARTBEATS].result(10)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(500):
        producer.send(HEARTBEATS, b"beat-%d" % i)
    producer.flush()
    producer.close()

    with RawClient(bootstrap) as client:
        metadata = client.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                          "include_topic_authorized_operations": False})
        described = client.request(75, 0, {"topics": [{"name": HEARTBEATS}, {"name": "__consumer_offsets"}],
                                           "response_partition_limit": 2000, "cursor": None})
    internal = {t.name: t.is_internal for t in metadata.topics}
    assert internal[HEARTBEATS] is False and internal["__consumer_offsets"] is True
    assert {t.name: t.is_internal for t in described.topics} == {HEARTBEATS: False, "__consumer_offsets": True}

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id="beats", auto_offset_reset="earliest",
                             consumer_timeout_ms=10_000)
    consumer.subscribe(pattern="__debezium-heartbeat.*")
    values = [m.value for _, m in zip(range(500), consumer)]
    consumer.close()
    assert values == [b"beat-%d" % i for i in range(500)]

    assert admin.delete_topics([HEARTBEATS])[HEARTBEATS].result(10) is None
    wait_until(lambda: HEARTBEATS not in admin.list_topics(timeout=10).topics, 10, "the topic gone")
