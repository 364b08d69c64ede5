"""The walking skeleton, end to end: kafka-python against a real broker process."""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import MessageSizeTooLargeError, TopicAlreadyExistsError, UnknownTopicOrPartitionError


def consume_all(bootstrap: str, topic: str, expected: int, **kwargs) -> list:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=5000,
        **kwargs,
    )
    partitions = consumer.partitions_for_topic(topic) or set()
    consumer.assign([TopicPartition(topic, p) for p in sorted(partitions)])
    consumer.seek_to_beginning()
    records = []
    for record in consumer:
        records.append(record)
        if len(records) >= expected:
            break
    consumer.close()
    return records


def test_produce_and_consume_with_defaults(trafka_broker):
    bootstrap = trafka_broker.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("orders", num_partitions=3, replication_factor=1)])
    producer = KafkaProducer(bootstrap_servers=bootstrap)  # idempotent, acks=all by default
    sent = []
    for i in range(300):
        key = None if i % 10 == 0 else f"key-{i % 7}".encode()
        value = None if i % 25 == 1 else f"value-{i}".encode()
        headers = [("n", str(i).encode()), ("empty", b"")] if i % 3 == 0 else []
        meta = producer.send("orders", key=key, value=value, headers=headers, partition=i % 3).get(timeout=10)
        sent.append((meta.partition, meta.offset, key, value, headers))
    producer.close()

    got = consume_all(bootstrap, "orders", len(sent))
    assert len(got) == len(sent)
    by_position = {(r.partition, r.offset): (r.key, r.value, [(k, v) for k, v in r.headers]) for r in got}
    for partition, offset, key, value, headers in sent:
        assert by_position[(partition, offset)] == (key, value, headers)
    for p in range(3):
        offsets = [r.offset for r in got if r.partition == p]
        assert offsets == list(range(100))
    admin.close()


def test_topic_auto_created_on_first_use(trafka_broker):
    producer = KafkaProducer(bootstrap_servers=trafka_broker.bootstrap_servers)
    producer.send("fresh-topic", b"hello").get(timeout=10)
    producer.close()
    assert [r.value for r in consume_all(trafka_broker.bootstrap_servers, "fresh-topic", 1)] == [b"hello"]


def test_admin_create_delete_and_errors(trafka_broker):
    admin = KafkaAdminClient(bootstrap_servers=trafka_broker.bootstrap_servers)
    admin.create_topics([NewTopic("a", 2, 1), NewTopic("b", 1, 1)])
    assert {"a", "b"} <= set(admin.list_topics())
    with pytest.raises(TopicAlreadyExistsError):
        admin.create_topics([NewTopic("a", 2, 1)])
    admin.delete_topics(["a"])
    assert "a" not in admin.list_topics()
    with pytest.raises(UnknownTopicOrPartitionError):
        admin.delete_topics(["a"])
    admin.close()


def test_data_survives_restart_mid_stream(trafka_broker):
    bootstrap = trafka_broker.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("events", 4, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    for i in range(2000):
        producer.send("events", key=str(i).encode(), value=f"before-{i}".encode())
    producer.flush()
    producer.close()

    trafka_broker.restart()

    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    for i in range(2000):
        producer.send("events", key=str(i).encode(), value=f"after-{i}".encode())
    producer.flush()
    producer.close()

    got = consume_all(bootstrap, "events", 4000)
    assert len(got) == 4000
    assert {r.value for r in got} == {f"before-{i}".encode() for i in range(2000)} | {f"after-{i}".encode() for i in range(2000)}
    for p in range(4):
        offsets = [r.offset for r in got if r.partition == p]
        assert offsets == list(range(len(offsets)))
        # Records produced before the restart come first in every partition.
        values = [r.value for r in got if r.partition == p]
        firsts = [v.startswith(b"before") for v in values]
        assert firsts == sorted(firsts, reverse=True)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    assert "events" in admin.list_topics()
    admin.close()


def test_message_near_and_above_max_message_bytes(trafka_broker):
    bootstrap = trafka_broker.bootstrap_servers
    limit = 1048588  # message.max.bytes, Kafka's default
    producer = KafkaProducer(bootstrap_servers=bootstrap, max_request_size=4 * limit, retries=0, compression_type=None)
    near = b"x" * (limit - 200)
    producer.send("big", near).get(timeout=10)
    with pytest.raises(MessageSizeTooLargeError):
        producer.send("big", b"y" * (limit + 1000)).get(timeout=10)
    producer.send("big", b"small").get(timeout=10)  # the broker is unharmed
    producer.close()
    got = consume_all(bootstrap, "big", 2, fetch_max_bytes=8 * limit, max_partition_fetch_bytes=8 * limit)
    assert [len(r.value) for r in got] == [len(near), len(b"small")]
