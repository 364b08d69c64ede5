"""confluent-kafka 2.16.1 (librdkafka 2.16.0): AdminClient, and the producer's own batching."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, OffsetSpec, ResourceType

from testkit.drivers import TIMEOUT_S
from trafka.testing.rawwire import RawClient
from trafka.wire.records import Compression

pytestmark = pytest.mark.compat_client("confluent-kafka")


@pytest.fixture
def admin(bootstrap):
    return AdminClient({"bootstrap.servers": bootstrap})


def wait(futures: dict):
    return {k: f.result(timeout=TIMEOUT_S) for k, f in futures.items()}


@pytest.mark.compat("metadata")
def test_list_topics(admin, bootstrap, trafka_topic):
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(trafka_topic, b"x")
    assert producer.flush(TIMEOUT_S) == 0
    md = admin.list_topics(timeout=TIMEOUT_S)
    assert [(b.id, b.port) for b in md.brokers.values()] == [(0, int(bootstrap.rsplit(":", 1)[1]))]
    assert md.controller_id == 0
    (partition,) = md.topics[trafka_topic].partitions.values()
    assert (partition.id, partition.leader, partition.replicas, partition.isrs) == (0, 0, [0], [0])


@pytest.mark.compat("admin-topics")
def test_create_and_delete_topics(admin):
    name = f"ck-admin-{uuid.uuid4().hex[:8]}"
    wait(admin.create_topics([NewTopic(name, num_partitions=2, replication_factor=1,
                                       config={"cleanup.policy": "compact"})]))
    with pytest.raises(KafkaException, match="TOPIC_ALREADY_EXISTS"):
        wait(admin.create_topics([NewTopic(name, num_partitions=2, replication_factor=1)]))
    assert len(admin.list_topics(name, timeout=TIMEOUT_S).topics[name].partitions) == 2
    wait(admin.delete_topics([name], operation_timeout=10))
    assert name not in admin.list_topics(timeout=TIMEOUT_S).topics


@pytest.mark.compat("admin-configs")
def test_describe_configs(admin):
    name = f"ck-cfg-{uuid.uuid4().hex[:8]}"
    wait(admin.create_topics([NewTopic(name, num_partitions=1, replication_factor=1, config={"retention.ms": "3600000"})]))
    (configs,) = wait(admin.describe_configs([ConfigResource(ResourceType.TOPIC, name)])).values()
    assert configs["retention.ms"].value == "3600000"
    assert configs["retention.ms"].source == 1  # DYNAMIC_TOPIC_CONFIG
    assert configs["segment.bytes"].value == "1073741824"
    (broker,) = wait(admin.describe_configs([ConfigResource(ResourceType.BROKER, "0")])).values()
    assert "log.retention.ms" in broker or "log.retention.hours" in broker


@pytest.mark.compat("list-offsets")
def test_list_offsets(admin, bootstrap, trafka_topic):
    producer = Producer({"bootstrap.servers": bootstrap})
    for i, ts in enumerate((1000, 2000, 3000)):
        producer.produce(trafka_topic, f"v{i}".encode(), partition=0, timestamp=ts)
    assert producer.flush(TIMEOUT_S) == 0
    tp = TopicPartition(trafka_topic, 0)

    def offset(spec):
        (info,) = wait(admin.list_offsets({tp: spec})).values()
        return info.offset, info.timestamp

    assert offset(OffsetSpec.earliest())[0] == 0
    assert offset(OffsetSpec.latest())[0] == 3
    assert offset(OffsetSpec.for_timestamp(1500)) == (1, 2000)
    assert offset(OffsetSpec.for_timestamp(9999))[0] == -1
    assert offset(OffsetSpec.max_timestamp()) == (2, 3000)


@pytest.mark.compat("produce", "compression")
def test_default_batching_keeps_batches_as_sent(bootstrap, trafka_topic):
    """librdkafka's own batching (linger.ms 5) with compression: many records per batch, and
    the broker stores each batch as sent (compressed, record count kept)."""
    producer = Producer({"bootstrap.servers": bootstrap, "compression.type": "zstd"})
    for i in range(500):
        producer.produce(trafka_topic, (f"value {i} " * 10).encode(), key=str(i % 7).encode(), partition=0)
    assert producer.flush(TIMEOUT_S) == 0
    with RawClient(bootstrap) as raw:
        batches = raw.fetch_batches(trafka_topic)
    assert sum(b.record_count for b in batches) == 500
    assert len(batches) < 50
    assert {b.compression for b in batches} == {Compression.ZSTD}
