"""A consumer whose position fell below the log start offset gets OFFSET_OUT_OF_RANGE, and its
auto.offset.reset decides: earliest -> the new log start, latest -> the end, none -> raise."""

from __future__ import annotations

import threading
import time

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic
from kafka.errors import NoOffsetForPartitionError, OffsetOutOfRangeError
from kafka.structs import OffsetAndMetadata, TopicPartition

from trafka.testing.waiting import wait_until
from testkit.kafka_python import admin_client, offsets


def produce(bootstrap: str, topic: str, values, partition: int = 0) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for value in values:  # one batch each: the tests use segments smaller than a whole run
        producer.send(topic, value.encode(), partition=partition).get(timeout=10)
    producer.close()


def poll_values(consumer: KafkaConsumer, want: int, timeout: float = 10.0) -> list[tuple[int, str]]:
    got: list[tuple[int, str]] = []
    deadline = time.monotonic() + timeout
    while len(got) < want and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=200).values():
            got += [(r.offset, r.value.decode()) for r in batch]
    return got


@pytest.fixture
def topic_with_deleted_head(trafka_broker):
    """Topic 'reset' with offsets 0-9, then DeleteRecords moves its log start offset to 6."""
    bootstrap = trafka_broker.bootstrap_servers
    admin = admin_client(bootstrap)
    admin.create_topics([NewTopic("reset", 1, 1)])
    produce(bootstrap, "reset", [f"v{i}" for i in range(10)])
    tp = TopicPartition("reset", 0)
    assert admin.delete_records({tp: 6})[tp]["low_watermark"] == 6
    admin.close()
    return bootstrap, tp


def positioned_consumer(bootstrap, tp, reset: str) -> KafkaConsumer:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset=reset, enable_auto_commit=False)
    consumer.assign([tp])
    consumer.seek(tp, 2)  # a position below the new log start offset
    return consumer


def test_earliest_resets_to_the_new_log_start(topic_with_deleted_head):
    bootstrap, tp = topic_with_deleted_head
    consumer = positioned_consumer(bootstrap, tp, "earliest")
    assert poll_values(consumer, 4) == [(6, "v6"), (7, "v7"), (8, "v8"), (9, "v9")]
    consumer.close()


def test_latest_resets_to_the_end(topic_with_deleted_head):
    bootstrap, tp = topic_with_deleted_head
    consumer = positioned_consumer(bootstrap, tp, "latest")
    wait_until(lambda: consumer.poll(timeout_ms=100) == {} and consumer.position(tp) == 10, 10, "reset to the end")
    produce(bootstrap, "reset", ["after"])
    assert poll_values(consumer, 1) == [(10, "after")]
    consumer.close()


def test_none_raises(topic_with_deleted_head):
    bootstrap, tp = topic_with_deleted_head
    consumer = positioned_consumer(bootstrap, tp, "none")
    with pytest.raises(OffsetOutOfRangeError):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            consumer.poll(timeout_ms=200)
    consumer.close()
    # Without any position, 'none' has nothing to fall back to either.
    fresh = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="none", group_id="no-offsets")
    fresh.assign([tp])
    with pytest.raises(NoOffsetForPartitionError):
        fresh.poll(timeout_ms=1000)
    fresh.close()


@pytest.mark.trafka_config({"log.retention.check.interval.ms": 100})
def test_retention_overtakes_a_stopped_consumer_group(trafka_broker):
    """A group commits offset 3 and stops; retention deletes the segments under that offset; the
    restarted group's committed offset is out of range and it resumes at the new log start."""
    bootstrap = trafka_broker.bootstrap_servers
    admin = admin_client(bootstrap)
    admin.create_topics([NewTopic("slow", 1, 1, topic_configs={"retention.ms": "1000", "segment.bytes": "200"})])
    admin.close()
    produce(bootstrap, "slow", [f"old-{i}" for i in range(20)])
    tp = TopicPartition("slow", 0)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id="notifications", auto_offset_reset="earliest",
                             enable_auto_commit=False)
    consumer.assign([tp])
    assert poll_values(consumer, 3)[:3] == [(0, "old-0"), (1, "old-1"), (2, "old-2")]
    consumer.commit({tp: OffsetAndMetadata(3, "", -1)})
    consumer.close()
    # Segments of 200 bytes hold a few records each; all of them age out after 1 s.
    wait_until(lambda: offsets(bootstrap, "slow", 1)[0][0] == 20, 10, "retention to move the log start offset")
    produce(bootstrap, "slow", [f"new-{i}" for i in range(3)])
    restarted = KafkaConsumer(bootstrap_servers=bootstrap, group_id="notifications", auto_offset_reset="earliest",
                              enable_auto_commit=False)
    restarted.assign([tp])
    assert restarted.committed(tp) == 3
    assert poll_values(restarted, 3) == [(20, "new-0"), (21, "new-1"), (22, "new-2")]
    restarted.close()


@pytest.mark.trafka_config({"log.retention.check.interval.ms": 100})
@pytest.mark.parametrize("reset", ["earliest", "latest", "none"])
def test_group_committed_offset_deleted_by_retention_resets_per_policy(trafka_broker, reset):
    """A subscribed group's committed offset that retention has since deleted is handed out
    as it is; the consumer's fetch is out of range and its auto.offset.reset decides."""
    bootstrap = trafka_broker.bootstrap_servers
    admin = admin_client(bootstrap)
    admin.create_topics([NewTopic("aged", 1, 1, topic_configs={"retention.ms": "1000", "segment.bytes": "200"})])
    admin.close()
    produce(bootstrap, "aged", [f"old-{i}" for i in range(10)])
    tp = TopicPartition("aged", 0)
    first = KafkaConsumer("aged", bootstrap_servers=bootstrap, group_id=f"g-{reset}", auto_offset_reset="earliest",
                          enable_auto_commit=False)
    assert [v for _, v in poll_values(first, 2)[:2]] == ["old-0", "old-1"]
    first.commit({tp: OffsetAndMetadata(2, "", -1)})
    first.close()
    wait_until(lambda: offsets(bootstrap, "aged", 1)[0][0] == 10, 10, "retention to move the log start offset")
    produce(bootstrap, "aged", ["new-0"])

    restarted = KafkaConsumer("aged", bootstrap_servers=bootstrap, group_id=f"g-{reset}", auto_offset_reset=reset,
                              enable_auto_commit=False)
    if reset == "none":
        with pytest.raises(OffsetOutOfRangeError):
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                restarted.poll(timeout_ms=200)
    elif reset == "earliest":
        assert poll_values(restarted, 1) == [(10, "new-0")]
    else:
        # Long polls: kafka-python re-sends JoinGroup when a poll ends inside a rebalance.
        wait_until(lambda: restarted.poll(timeout_ms=1000) == {} and restarted.assignment() and restarted.position(tp) == 11,
                   20, "reset to the end")
        produce(bootstrap, "aged", ["new-1"])
        assert poll_values(restarted, 1) == [(11, "new-1")]
    assert restarted.committed(tp) == 2  # the stale commit itself is unchanged until a new commit
    restarted.close()


@pytest.mark.parametrize("reset", ["earliest", "latest", "error"])
def test_confluent_kafka_out_of_range_applies_auto_offset_reset(topic_with_deleted_head, reset):
    """librdkafka sees OFFSET_OUT_OF_RANGE (it refuses a null record set in an error partition)
    and applies auto.offset.reset; 'error' is its spelling of 'none'."""
    from confluent_kafka import Consumer, KafkaError
    from confluent_kafka import TopicPartition as CTopicPartition

    bootstrap, tp = topic_with_deleted_head
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"oor-{reset}", "auto.offset.reset": reset,
                         "enable.auto.commit": False})
    consumer.assign([CTopicPartition(tp.topic, 0, 2)])  # below the log start offset 6
    if reset == "latest":
        produce_later = threading.Timer(1.5, produce, (bootstrap, "reset", ["after"]))
        produce_later.start()
    got, errors = [], []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(got) < (1 if reset == "latest" else 4) and not errors:
        message = consumer.poll(0.2)
        if message is None:
            continue
        if message.error():
            errors.append(message.error().code())
        else:
            got.append((message.offset(), message.value().decode()))
    consumer.close()
    if reset == "earliest":
        assert got == [(6, "v6"), (7, "v7"), (8, "v8"), (9, "v9")]
    elif reset == "latest":
        produce_later.join()
        assert got == [(10, "after")]
    else:
        assert errors == [KafkaError._AUTO_OFFSET_RESET]
