"""kafka-python 3.0.12: what the common and cross-client suites do not cover."""

from __future__ import annotations

import uuid

import pytest
from kafka import KafkaAdminClient, KafkaProducer, OffsetSpec, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import TopicAlreadyExistsError, UnknownTopicOrPartitionError

pytestmark = pytest.mark.compat_client("kafka-python")


@pytest.fixture
def admin(bootstrap):
    client = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    yield client
    client.close()


@pytest.mark.compat("metadata")
def test_api_versions_read_as_one_kafka_release(admin, bootstrap, trafka_topic):
    """kafka-python infers the broker's Kafka version from ApiVersions and changes behaviour by
    it; the advertised bands must read as a real release: Kafka 4.3's (DescribeLogDirs v5 is
    its 4.3 marker). kafka-python 3.0.12 carries Kafka 4.3's whole table, and trafka's matches it."""
    assert admin._manager.broker_version == (4, 3)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    producer.send(trafka_topic, b"x").get(timeout=10)  # auto-creates the topic
    producer.close()
    assert trafka_topic in admin.list_topics()
    (described,) = admin.describe_topics([trafka_topic])
    assert described["error_code"] == 0
    assert [(p["partition_index"], p["leader_id"], p["replica_nodes"]) for p in described["partitions"]] == [(0, 0, [0])]


@pytest.mark.compat("admin-topics")
def test_create_and_delete_topics(admin):
    name = f"kp-admin-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(name, 3, 1)])
    with pytest.raises(TopicAlreadyExistsError):
        admin.create_topics([NewTopic(name, 3, 1)])
    assert len(admin.describe_topics([name])[0]["partitions"]) == 3
    admin.delete_topics([name])
    assert name not in admin.list_topics()
    with pytest.raises(UnknownTopicOrPartitionError):
        admin.delete_topics([name])


@pytest.mark.compat("admin-configs")
def test_describe_configs(admin):
    name = f"kp-cfg-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(name, 1, 1, topic_configs={"retention.ms": "3600000"})])
    result = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, name)], config_filter="all")
    configs = {k: v["value"] for k, v in result["topic"][name].items()}
    assert configs["retention.ms"] == "3600000"
    assert configs["cleanup.policy"] == "delete"
    assert configs["message.timestamp.type"] == "CreateTime"


@pytest.mark.compat("list-offsets")
def test_list_offsets(admin, bootstrap, trafka_topic):
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i, ts in enumerate((1000, 2000, 3000)):
        assert producer.send(trafka_topic, f"v{i}".encode(), timestamp_ms=ts).get(timeout=10).offset == i
    producer.close()
    tp = TopicPartition(trafka_topic, 0)

    def offset(spec):
        return admin.list_partition_offsets({tp: spec})[tp]

    assert offset(OffsetSpec.EARLIEST).offset == 0
    assert offset(OffsetSpec.LATEST).offset == 3
    assert (offset(1500).offset, offset(1500).timestamp) == (1, 2000)
    assert offset(2000).offset == 1
    assert offset(9999).offset == -1
    assert (offset(OffsetSpec.MAX_TIMESTAMP).offset, offset(OffsetSpec.MAX_TIMESTAMP).timestamp) == (2, 3000)
