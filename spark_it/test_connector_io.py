"""The Kafka I/O of Spark's connector, replayed with Java kafka-clients 3.9.1 (what Spark 4.0 uses).

CI has no Spark connector jars, so these tests make the same client calls with the same settings
that spark-sql-kafka-0-10 makes, and always run (they need Java 17 and `testkit.setup_deps`):

* driver, KafkaOffsetReaderAdmin: an Admin built from the driver's consumer params; describeTopics
  (internal topics dropped), listTopics for subscribePattern, listOffsets earliest / latest /
  forTimestamp with ListOffsetsOptions(isolation level).
* executors, InternalKafkaConsumer: a consumer per partition with auto.offset.reset=none,
  enable.auto.commit=false, group.id spark-kafka-source-...-executor, ByteArrayDeserializer; assign,
  seek, poll, position, and the available range through seekToBeginning/seekToEnd + position.
* sink, KafkaWriteTask: a KafkaProducer<byte[], byte[]> with the client defaults (idempotent, acks=all).
"""

from __future__ import annotations

import re
import time
import uuid

import pytest

from testkit.java import KafkaJavaError
from spark_it.harness import batch_headers, consume_all, create_topic, produce

pytestmark = pytest.mark.timeout(120)

BYTES_DESER = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
INVALID_OFFSET = -1  # OffsetFetchResponse.INVALID_OFFSET: no record at or after the timestamp


def driver_params(bootstrap: str) -> dict:
    """KafkaSourceProvider.kafkaParamsForDriver: what the driver's Admin is created with."""
    return {"bootstrap.servers": bootstrap, "key.deserializer": BYTES_DESER, "value.deserializer": BYTES_DESER,
            "auto.offset.reset": "earliest", "enable.auto.commit": "false", "max.poll.records": "1",
            "receive.buffer.bytes": "65536"}


def executor_params(bootstrap: str, **more) -> dict:
    """KafkaSourceProvider.kafkaParamsForExecutors, with a streaming query's unique group id."""
    group = f"spark-kafka-source-{uuid.uuid4()}-{hash('/checkpoint') & 0x7fffffff}-executor"
    return {"bootstrap.servers": bootstrap, "key.deserializer": BYTES_DESER, "value.deserializer": BYTES_DESER,
            "auto.offset.reset": "none", "group.id": group, "enable.auto.commit": "false",
            "receive.buffer.bytes": "65536", **more}


def list_offsets(kafka, admin, partitions, spec, isolation: str = "READ_UNCOMMITTED") -> dict:
    """admin.listOffsets(params, new ListOffsetsOptions(isolationLevel)) as KafkaOffsetReaderAdmin calls it."""
    jvm = kafka.jvm
    admin_pkg = jvm.org.apache.kafka.clients.admin
    if spec == "earliest":
        jspec = admin_pkg.OffsetSpec.earliest()
    elif spec == "latest":
        jspec = admin_pkg.OffsetSpec.latest()
    else:
        jspec = admin_pkg.OffsetSpec.forTimestamp(int(spec))
    params = jvm.java.util.HashMap()
    for t, p in partitions:
        params.put(kafka.tp(t, p), jspec)
    options = admin_pkg.ListOffsetsOptions(jvm.org.apache.kafka.common.IsolationLevel.valueOf(isolation))
    result = kafka.call(lambda: admin.j.listOffsets(params, options).all().get())
    return {(tp.topic(), tp.partition()): info.offset() for tp, info in result.items()}


def available_range(consumer, topic: str, partition: int) -> tuple[int, int]:
    """InternalKafkaConsumer.getAvailableOffsetRange: seekToBeginning/position, seekToEnd/position."""
    consumer.seekToBeginning([(topic, partition)])
    earliest = consumer.position(topic, partition)
    consumer.seekToEnd([(topic, partition)])
    return earliest, consumer.position(topic, partition)


def fetch(consumer, topic: str, partition: int, offset: int, poll_ms: int = 5000):
    """InternalKafkaConsumer.fetch: seek, poll once, then the position after the poll."""
    consumer.seek(topic, partition, offset)
    records = [r for r in consumer.poll(poll_ms) if r.partition == partition]
    return records, consumer.position(topic, partition)


def executor_consumer(k, bootstrap, topic, partition, **more):
    consumer = k.make_consumer(executor_params(bootstrap, **more))
    consumer.assign([(topic, partition)])
    return consumer


@pytest.fixture
def topic(bootstrap, request):
    name = f"{re.sub(r'[^a-zA-Z0-9._-]', '-', request.node.name)[:60]}-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, name, partitions=2)
    return name


# -- driver ----------------------------------------------------------------------------------------


def test_driver_admin_describes_topics_and_lists_them_without_internal_ones(java_client_39, bootstrap, topic):
    admin = java_client_39.make_admin(driver_params(bootstrap))
    described = admin.describeTopics([topic])
    assert [p["partition"] for p in described[topic]["partitions"]] == [0, 1]
    assert described[topic]["internal"] is False
    assert all(p["leader"] == 0 for p in described[topic]["partitions"])
    listed = admin.listTopics()  # subscribePattern matches its regex against this list
    assert topic in listed
    assert not any(t.startswith("__") for t in listed)


def test_driver_admin_describe_of_a_missing_topic_fails_and_creates_nothing(java_client_39, bootstrap):
    admin = java_client_39.make_admin(driver_params(bootstrap))
    missing = f"missing-{uuid.uuid4().hex[:8]}"
    with pytest.raises(KafkaJavaError) as info:
        admin.describeTopics([missing])
    assert info.value.simple_name == "UnknownTopicOrPartitionException"
    assert missing not in admin.listTopics()


@pytest.mark.parametrize("isolation", ["READ_UNCOMMITTED", "READ_COMMITTED"])
def test_driver_list_offsets_earliest_latest_and_timestamps(java_client_39, bootstrap, topic, isolation):
    base = (int(time.time()) - 600) * 1000
    produce(bootstrap, topic, [{"value": b"x", "partition": i % 2, "timestamp_ms": base + 1000 * i}
                               for i in range(10)])  # partition 0: ts base+0,2,4,6,8 s; 1: base+1,3,..
    admin = java_client_39.make_admin(driver_params(bootstrap))
    parts = [(topic, 0), (topic, 1)]
    k = java_client_39
    assert list_offsets(k, admin, parts, "earliest", isolation) == {(topic, 0): 0, (topic, 1): 0}
    assert list_offsets(k, admin, parts, "latest", isolation) == {(topic, 0): 5, (topic, 1): 5}
    assert list_offsets(k, admin, parts, base + 3000, isolation) == {(topic, 0): 2, (topic, 1): 1}
    assert list_offsets(k, admin, parts, base, isolation) == {(topic, 0): 0, (topic, 1): 0}
    # After the last record: no offset (Spark then errors or, for ending offsets, uses latest).
    assert list_offsets(k, admin, parts, base + 60_000, isolation) == {(topic, 0): INVALID_OFFSET,
                                                                        (topic, 1): INVALID_OFFSET}


def test_driver_sees_delete_records_as_a_new_earliest_offset(java_client_39, bootstrap, topic):
    produce(bootstrap, topic, [{"value": b"x", "partition": 0} for _ in range(6)])
    admin = java_client_39.make_admin(driver_params(bootstrap))
    admin.deleteRecords({(topic, 0): 4})
    assert list_offsets(java_client_39, admin, [(topic, 0)], "earliest") == {(topic, 0): 4}
    assert list_offsets(java_client_39, admin, [(topic, 0)], "latest") == {(topic, 0): 6}


# -- executors -------------------------------------------------------------------------------------


def test_executor_fetch_returns_what_kafka_python_wrote(java_client_39, bootstrap, topic):
    base = (int(time.time()) - 60) * 1000
    sent = [{"key": None if i == 2 else f"k{i}".encode(), "value": None if i == 3 else f"v{i}".encode(),
             "headers": [("h", str(i).encode()), ("empty", b"")], "partition": 1, "timestamp_ms": base + i}
            for i in range(5)]
    produce(bootstrap, topic, sent, linger_ms=50)  # one batch
    consumer = executor_consumer(java_client_39, bootstrap, topic, 1)
    records, after = fetch(consumer, topic, 1, 0)
    assert [(r.offset, r.key, r.value, r.headers, r.timestamp) for r in records] == [
        (i, s["key"], s["value"], s["headers"], s["timestamp_ms"]) for i, s in enumerate(sent)]
    assert after == 5
    assert available_range(consumer, topic, 1) == (0, 5)


def test_executor_fetch_from_inside_a_batch_and_seeking_back(java_client_39, bootstrap, topic):
    produce(bootstrap, topic, [{"value": f"v{i}".encode(), "partition": 0} for i in range(8)], linger_ms=50)
    consumer = executor_consumer(java_client_39, bootstrap, topic, 0)
    records, after = fetch(consumer, topic, 0, 3)
    assert [r.value for r in records] == [f"v{i}".encode() for i in range(3, 8)] and after == 8
    available_range(consumer, topic, 0)  # moves the position to the end, as Spark does after each poll
    records, after = fetch(consumer, topic, 0, 1)  # a pooled consumer is reused from an earlier offset
    assert [r.offset for r in records] == list(range(1, 8)) and after == 8


def test_executor_poll_at_the_end_times_out_without_moving(java_client_39, bootstrap, topic):
    produce(bootstrap, topic, [{"value": b"x", "partition": 0} for _ in range(2)])
    consumer = executor_consumer(java_client_39, bootstrap, topic, 0)
    started = time.monotonic()
    records, after = fetch(consumer, topic, 0, 2, poll_ms=700)
    assert records == [] and after == 2  # Spark: "Cannot fetch record for offset 2" (TimeoutException)
    assert time.monotonic() - started >= 0.6
    produce(bootstrap, topic, [{"value": b"late", "partition": 0}])
    records, after = fetch(consumer, topic, 0, 2)
    assert [r.value for r in records] == [b"late"] and after == 3


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_executor_fetch_below_the_log_start_is_out_of_range(java_client_39, bootstrap, topic, isolation):
    produce(bootstrap, topic, [{"value": f"v{i}".encode(), "partition": 0} for i in range(20)])
    java_client_39.make_admin(driver_params(bootstrap)).deleteRecords({(topic, 0): 15})
    consumer = executor_consumer(java_client_39, bootstrap, topic, 0, **{"isolation.level": isolation})
    with pytest.raises(KafkaJavaError) as info:
        fetch(consumer, topic, 0, 10)
    assert info.value.simple_name == "OffsetOutOfRangeException"  # failOnDataLoss=true: the query fails
    # failOnDataLoss=false: Spark asks for the available range and goes on from its start.
    consumer.close()
    consumer = executor_consumer(java_client_39, bootstrap, topic, 0, **{"isolation.level": isolation})
    assert available_range(consumer, topic, 0) == (15, 20)
    records, after = fetch(consumer, topic, 0, 15)
    assert [r.offset for r in records] == list(range(15, 20)) and after == 20


def test_executor_fetch_above_the_end_is_out_of_range(java_client_39, bootstrap, topic):
    produce(bootstrap, topic, [{"value": b"x", "partition": 0} for _ in range(3)])
    consumer = executor_consumer(java_client_39, bootstrap, topic, 0)
    with pytest.raises(KafkaJavaError) as info:
        fetch(consumer, topic, 0, 10)
    assert info.value.simple_name == "OffsetOutOfRangeException"


def test_delete_records_inside_a_batch_starts_the_log_mid_batch(java_client_39, bootstrap, topic):
    produce(bootstrap, topic, [{"value": f"v{i}".encode(), "partition": 0} for i in range(6)], linger_ms=50)
    java_client_39.make_admin(driver_params(bootstrap)).deleteRecords({(topic, 0): 2})
    consumer = executor_consumer(java_client_39, bootstrap, topic, 0)
    assert available_range(consumer, topic, 0) == (2, 6)
    records, after = fetch(consumer, topic, 0, 2)
    assert [r.offset for r in records] == [2, 3, 4, 5] and after == 6


# -- sink ------------------------------------------------------------------------------------------


def test_sink_producer_is_idempotent_and_kafka_python_reads_it(java_client_39, bootstrap, kafka_broker, topic):
    producer = java_client_39.make_producer({"bootstrap.servers": bootstrap})  # Spark adds only the serializers
    futures = [producer.send_async(topic, key=None if i % 4 == 0 else f"k{i}", value=f"v{i}",
                                   headers=[("h", b"\x00\x01")], partition=i % 2) for i in range(20)]
    metadata = [f.get() for f in futures]
    producer.flush()
    assert sorted(m.offset for m in metadata if m.partition == 0) == list(range(10))
    got = consume_all(bootstrap, topic, 20)
    assert sorted((r.partition, r.value, r.key, r.headers) for r in got) == sorted(
        (i % 2, f"v{i}".encode(), None if i % 4 == 0 else f"k{i}".encode(), [("h", b"\x00\x01")])
        for i in range(20))
    headers = batch_headers(kafka_broker.data_dir, topic, 0) + batch_headers(kafka_broker.data_dir, topic, 1)
    assert headers and all(h.producer_id >= 0 and h.base_sequence >= 0 for h in headers)
    assert len({h.producer_id for h in headers}) == 1


# -- read_committed (kafka.isolation.level) ---------------------------------------------------------


def _transactional_topic(request, bootstrap: str, topic: str) -> None:
    """Partition 0: c0 c1 (committed), a0 (aborted), c2 (committed), o0 (open, left open)."""
    from testkit.txn_clients import producer

    p = producer(request, "confluent-kafka", bootstrap, f"spark-{uuid.uuid4().hex[:8]}")
    p.init()
    p.begin(); p.send(topic, b"c0"); p.send(topic, b"c1"); p.commit()  # offsets 0, 1, marker 2
    p.begin(); p.send(topic, b"a0"); p.flush(); p.abort()              # offset 3, marker 4
    p.begin(); p.send(topic, b"c2"); p.commit()                        # offset 5, marker 6
    p.begin(); p.send(topic, b"o0"); p.flush()                         # offset 7, open
    request.addfinalizer(p.abort)


def test_read_committed_driver_offsets_and_executor_fetch(request, java_client_39, bootstrap, topic):
    """kafka.isolation.level=read_committed: the driver's latest offset is the last stable offset,
    and an executor reading up to it gets the committed records only (aborted ones skipped, the
    open transaction not reached), as Spark's KafkaDataConsumer sees them."""
    _transactional_topic(request, bootstrap, topic)
    k = java_client_39
    admin = k.make_admin(driver_params(bootstrap))
    assert list_offsets(k, admin, [(topic, 0)], "latest", "READ_COMMITTED") == {(topic, 0): 7}
    assert list_offsets(k, admin, [(topic, 0)], "latest", "READ_UNCOMMITTED") == {(topic, 0): 8}
    consumer = executor_consumer(k, bootstrap, topic, 0, **{"isolation.level": "read_committed"})
    assert available_range(consumer, topic, 0) == (0, 7)
    got, position = [], 0
    deadline = time.monotonic() + 30
    while position < 7 and time.monotonic() < deadline:
        records, position = fetch(consumer, topic, 0, position, poll_ms=1000)
        got += [(r.offset, r.value) for r in records]
    assert got == [(0, b"c0"), (1, b"c1"), (5, b"c2")]
    assert position == 7
    uncommitted = executor_consumer(k, bootstrap, topic, 0)
    records, _ = fetch(uncommitted, topic, 0, 3)
    assert [(r.offset, r.value) for r in records][:1] == [(3, b"a0")]
