"""Java kafka-clients 3.9.1 and 4.3.0 through the py4j harness: Admin and the producer's
defaults. Every test runs once per version (the ``client`` parameter)."""

from __future__ import annotations

import uuid

import pytest

from testkit.java import KafkaJavaError
from trafka.testing.rawwire import RawClient

VERSIONS = {"java-3.9.1": "java_client_39", "java-4.3.0": "java_client_43"}


@pytest.fixture(params=list(VERSIONS))
def client(request):
    return request.getfixturevalue(VERSIONS[request.param])


@pytest.fixture
def admin(client, bootstrap):
    return client.make_admin({"bootstrap.servers": bootstrap})


def unique(what: str) -> str:
    return f"java-{what}-{uuid.uuid4().hex[:8]}"


@pytest.mark.compat("produce", "idempotent")
def test_default_producer_is_idempotent(client, bootstrap):
    topic = unique("idem")
    producer = client.make_producer({"bootstrap.servers": bootstrap})  # enable.idempotence=true, acks=all
    offsets = [f.get(30).offset for f in [producer.send_async(topic, b"k", f"v{i}".encode()) for i in range(50)]]
    producer.close()
    assert offsets == list(range(50))
    with RawClient(bootstrap) as raw:
        batches = raw.fetch_batches(topic)
    assert {b.producer_id >= 0 for b in batches} == {True}
    assert batches[0].base_sequence == 0
    assert sum(b.record_count for b in batches) == 50


@pytest.mark.compat("metadata", "admin-topics")
def test_create_describe_delete_topics(admin, client, bootstrap):
    name = unique("admin")
    admin.createTopics(name, partitions=3, configs={"cleanup.policy": "compact"})
    with pytest.raises(KafkaJavaError) as exc:
        admin.createTopics(name)
    assert exc.value.simple_name == "TopicExistsException"
    described = admin.describeTopics(name)[name]
    assert described["internal"] is False
    assert [(p["partition"], p["leader"], p["replicas"], p["isr"]) for p in described["partitions"]] == \
        [(i, 0, [0], [0]) for i in range(3)]
    assert name in admin.listTopics()
    assert "__consumer_offsets" in admin.listTopics(internal=True)
    consumer = client.make_consumer({"bootstrap.servers": bootstrap})
    assert consumer.listTopics()[name] == [0, 1, 2]
    consumer.close()
    admin.deleteTopics(name)
    assert name not in admin.listTopics()
    with pytest.raises(KafkaJavaError) as exc:
        admin.deleteTopics(name)
    assert exc.value.simple_name == "UnknownTopicOrPartitionException"


@pytest.mark.compat("admin-configs")
def test_describe_configs(admin):
    name = unique("cfg")
    admin.createTopics(name, configs={"retention.ms": "3600000", "message.timestamp.type": "LogAppendTime"})
    configs = admin.describeConfigs(name)
    assert configs["retention.ms"] == "3600000"
    assert configs["message.timestamp.type"] == "LogAppendTime"
    assert configs["segment.bytes"] == "1073741824"
    broker = admin.describeConfigs("0", resource_type="broker")
    assert broker  # static broker settings, by Kafka's names


@pytest.mark.compat("list-offsets")
def test_list_offsets(admin, client, bootstrap):
    topic = unique("offsets")
    admin.createTopics(topic)
    producer = client.make_producer({"bootstrap.servers": bootstrap})
    for i, ts in enumerate((1000, 2000, 3000)):
        assert producer.send(topic, value=f"v{i}".encode(), partition=0, timestamp=ts).offset == i
    producer.close()
    tp = (topic, 0)
    assert admin.listOffsets([tp], "earliest")[tp].offset == 0
    assert admin.listOffsets([tp], "latest")[tp].offset == 3
    assert tuple(admin.listOffsets([tp], 1500)[tp]) == (1, 2000)
    assert admin.listOffsets([tp], 9999)[tp].offset == -1
    assert tuple(admin.listOffsets([tp], "max_timestamp")[tp]) == (2, 3000)
