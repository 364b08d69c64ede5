"""Kafka 4.1+ (KIP-966) writes a cluster-level `min.insync.replicas` when its controller first
starts, so DescribeConfigs reports it on every topic and on the broker as
DYNAMIC_DEFAULT_BROKER_CONFIG (with the static value, default 1), and a topic override still
wins. Checked with confluent-kafka's AdminClient."""

from __future__ import annotations

import uuid

from trafka.testing import TrafkaBroker


def _describe(bootstrap: str, resource_type, name: str) -> dict:
    from confluent_kafka.admin import AdminClient, ConfigResource

    admin = AdminClient({"bootstrap.servers": bootstrap})
    (future,) = admin.describe_configs([ConfigResource(resource_type, name)]).values()
    return future.result(30)


def _topic(bootstrap: str, config: dict) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"isr-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, 1, config=config)]).values():
        future.result(30)
    return name


def test_topics_and_the_broker_report_the_cluster_default(trafka_broker):
    from confluent_kafka.admin import ConfigSource, ResourceType

    bootstrap = trafka_broker.bootstrap_servers
    entry = _describe(bootstrap, ResourceType.TOPIC, _topic(bootstrap, {}))["min.insync.replicas"]
    assert (entry.value, entry.source) == ("1", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)
    overridden = _describe(bootstrap, ResourceType.TOPIC, _topic(bootstrap, {"min.insync.replicas": "1"}))
    assert overridden["min.insync.replicas"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    broker_entry = _describe(bootstrap, ResourceType.BROKER, "0")["min.insync.replicas"]
    assert (broker_entry.value, broker_entry.source) == ("1", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)


def test_the_cluster_default_carries_the_static_value(tmp_path):
    from confluent_kafka.admin import ConfigSource, ResourceType

    with TrafkaBroker(tmp_path / "data", config={"min.insync.replicas": "2"}) as broker:
        entry = _describe(broker.bootstrap_servers, ResourceType.TOPIC, _topic(broker.bootstrap_servers, {}))
    isr = entry["min.insync.replicas"]
    assert (isr.value, isr.source) == ("2", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)
