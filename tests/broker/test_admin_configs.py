"""Topic configs, DeleteRecords and CreatePartitions through kafka-python's admin client."""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka.errors import InvalidConfigurationError, InvalidPartitionsError
from kafka.structs import TopicPartition


@pytest.fixture
def admin(trafka_broker):
    client = KafkaAdminClient(bootstrap_servers=trafka_broker.bootstrap_servers)
    yield client
    client.close()


def describe(admin, topic: str) -> dict:
    result = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="all")
    return {name: entry["value"] for name, entry in result["topic"][topic].items()}


def test_create_with_configs_describe_and_alter(admin):
    admin.create_topics([NewTopic("cfg", 1, 1, topic_configs={"retention.ms": "60000", "cleanup.policy": "compact"})])
    configs = describe(admin, "cfg")
    assert configs["retention.ms"] == "60000"
    assert configs["cleanup.policy"] == "compact"
    assert configs["segment.bytes"] == "1073741824"  # Kafka's default

    # IncrementalAlterConfigs (kafka-python's default): SET one, others untouched.
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "cfg", configs={"segment.ms": "10000"})])
    configs = describe(admin, "cfg")
    assert (configs["segment.ms"], configs["retention.ms"]) == ("10000", "60000")
    # DELETE goes back to the default; APPEND adds to a list config.
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "cfg", configs={"retention.ms": ("DELETE", None), "cleanup.policy": ("APPEND", "delete")})])
    configs = describe(admin, "cfg")
    assert (configs["retention.ms"], configs["cleanup.policy"]) == ("604800000", "compact,delete")
    # Classic AlterConfigs replaces the whole set (kafka-python re-sends the other overrides).
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "cfg", configs={"retention.ms": "120000"})], incremental=False)
    configs = describe(admin, "cfg")
    assert (configs["retention.ms"], configs["segment.ms"]) == ("120000", "10000")


def test_list_config_subtracted_to_nothing(admin):
    """Kafka accepts an empty cleanup.policy (KIP-1161: delete with infinite retention); an
    item outside the allowed set is still refused."""
    admin.create_topics([NewTopic("nopolicy", 1, 1, topic_configs={"cleanup.policy": "delete"})])
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "nopolicy", configs={"cleanup.policy": ("SUBTRACT", "delete")})])
    assert describe(admin, "nopolicy")["cleanup.policy"] == ""
    result = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "nopolicy", configs={"cleanup.policy": ("APPEND", "shred")})])
    assert "InvalidConfigurationError" in str(result["topic"]["nopolicy"])
    assert describe(admin, "nopolicy")["cleanup.policy"] == ""


def test_invalid_configs_are_refused(admin):
    with pytest.raises(InvalidConfigurationError):
        admin.create_topics([NewTopic("bad", 1, 1, topic_configs={"retention.ms": "soon"})])
    with pytest.raises(InvalidConfigurationError):
        admin.create_topics([NewTopic("bad", 1, 1, topic_configs={"no.such.config": "1"})])
    assert "bad" not in admin.list_topics()


def test_delete_records_moves_log_start(admin, trafka_broker):
    admin.create_topics([NewTopic("dr", 1, 1)])
    producer = KafkaProducer(bootstrap_servers=trafka_broker.bootstrap_servers)
    for i in range(10):
        producer.send("dr", f"v{i}".encode()).get(timeout=10)
    producer.close()
    tp = TopicPartition("dr", 0)
    result = admin.delete_records({tp: 5})
    assert result[tp]["low_watermark"] == 5
    consumer = KafkaConsumer(bootstrap_servers=trafka_broker.bootstrap_servers)
    assert consumer.beginning_offsets([tp])[tp] == 5
    assert consumer.end_offsets([tp])[tp] == 10
    consumer.close()


def test_create_partitions(admin):
    admin.create_topics([NewTopic("grow", 2, 1)])
    admin.create_partitions({"grow": NewPartitions(5)})
    assert len(admin.describe_topics(["grow"])[0]["partitions"]) == 5
    with pytest.raises(InvalidPartitionsError):
        admin.create_partitions({"grow": NewPartitions(3)})


def test_broker_configs_read_as_a_kafka4_node(admin, trafka_broker):
    """DescribeConfigs for the broker answers the settings every KRaft node has, with the
    values in force: the listener the client reached, the data dir, broker and controller."""
    result = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "0")], config_filter="all")
    configs = {name: entry["value"] for name, entry in result["broker"]["0"].items()}
    endpoint = f"PLAINTEXT://{trafka_broker.bootstrap_servers}"
    assert configs["advertised.listeners"] == endpoint
    assert configs["listeners"] == endpoint
    assert configs["process.roles"] == "broker,controller"
    assert configs["node.id"] == "0"
    assert configs["log.dirs"] == str(trafka_broker.data_dir.resolve())


def test_replication_throttled_replicas_are_kafka_4_topic_configs(admin):
    """Kafka 4 has leader.replication.throttled.replicas and follower.replication.throttled.replicas
    (lists of partition:broker, or '*'; default empty, no broker setting); trafka stores and
    reports them (it throttles no replication)."""
    admin.create_topics([NewTopic("throttled", 2, 1, topic_configs={"leader.replication.throttled.replicas": "0:0,1:0"})])
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "throttled",
                                        configs={"follower.replication.throttled.replicas": "*"})])
    configs = describe(admin, "throttled")
    assert (configs["leader.replication.throttled.replicas"], configs["follower.replication.throttled.replicas"]) == ("0:0,1:0", "*")
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "throttled",
                                        configs={"leader.replication.throttled.replicas": ("DELETE", None)})])
    assert describe(admin, "throttled")["leader.replication.throttled.replicas"] == ""
    result = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "throttled",
                                                 configs={"follower.replication.throttled.replicas": "0-0"})])
    assert "InvalidConfigurationError" in str(result["topic"]["throttled"])
    assert describe(admin, "throttled")["follower.replication.throttled.replicas"] == "*"
