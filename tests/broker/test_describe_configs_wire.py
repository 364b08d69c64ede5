"""DescribeConfigs on the wire, field by field against what Kafka answers (ConfigHelper):
which keys an empty list asks for, and the synonyms of a topic config."""

from __future__ import annotations

import pytest

from trafka.testing.rawwire import RawClient
from trafka.wire.errors import ErrorCode

TOPIC, BROKER = 2, 4


def described(raw: RawClient, resource_type: int, name: str, keys, *, version: int = 4, synonyms: bool = False) -> dict:
    body = {"resources": [{"resource_type": resource_type, "resource_name": name, "configuration_keys": keys}],
            "include_synonyms": synonyms, "include_documentation": False}
    [result] = raw.request(32, version, body).results
    assert result.error_code == ErrorCode.NONE, result.error_message
    return {c.name: c for c in result.configs}


def make_topic(raw: RawClient, name: str, configs: dict[str, str] | None = None) -> None:
    [topic] = raw.request(19, 5, {"topics": [{
        "name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [],
        "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}],
        "timeout_ms": 10000, "validate_only": False}).topics
    assert topic.error_code == ErrorCode.NONE, topic.error_message


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_an_empty_key_list_asks_for_every_config_as_null_does(trafka_session_broker, version):
    """Kafka's ConfigHelper lists every config for a null or an empty key list, in every version."""
    topic = f"every-{version}"
    with RawClient(trafka_session_broker.bootstrap_servers) as raw:
        make_topic(raw, topic)
        for resource_type, name in ((TOPIC, topic), (BROKER, "0")):
            every = described(raw, resource_type, name, None, version=version)
            assert len(every) > 10
            assert described(raw, resource_type, name, [], version=version).keys() == every.keys()
        assert described(raw, TOPIC, topic, ["retention.ms"], version=version).keys() == {"retention.ms"}


def synonyms_of(entry) -> list[tuple[str, str | None, int]]:
    return [(s.name, s.value, s.source) for s in entry.synonyms]


DEFAULT, STATIC, TOPIC_CONFIG = 5, 4, 1


@pytest.mark.trafka_config({"log.retention.ms": "3600000", "log.roll.hours": "2", "log.segment.bytes": "4096"})
def test_topic_config_synonyms_are_the_broker_settings_kafka_lists(trafka_broker):
    """ConfigHelper lists the broker settings behind a topic config (LogConfig's synonym map:
    log.cleanup.policy, message.max.bytes...), from this broker's values down to Kafka's broker
    defaults, and only from the finest-unit setting on: retention.ms, segment.ms,
    segment.jitter.ms and flush.ms have no default of their own in Kafka (their hours or
    scheduler setting gives it), so with only those set they list nothing and read as defaults."""
    with RawClient(trafka_broker.bootstrap_servers) as raw:
        make_topic(raw, "syn", {"cleanup.policy": "compact"})
        configs = described(raw, TOPIC, "syn", None, synonyms=True)
    expected = {
        "cleanup.policy": ("compact", TOPIC_CONFIG, [("cleanup.policy", "compact", TOPIC_CONFIG),
                                                     ("log.cleanup.policy", "delete", DEFAULT)]),
        "max.message.bytes": ("1048588", DEFAULT, [("message.max.bytes", "1048588", DEFAULT)]),
        "min.cleanable.dirty.ratio": ("0.5", DEFAULT, [("log.cleaner.min.cleanable.ratio", "0.5", DEFAULT)]),
        "segment.bytes": ("4096", STATIC, [("log.segment.bytes", "4096", STATIC), ("log.segment.bytes", "1073741824", DEFAULT)]),
        "retention.ms": ("3600000", STATIC, [("log.retention.ms", "3600000", STATIC), ("log.retention.hours", "168", DEFAULT)]),
        "segment.ms": ("7200000", DEFAULT, []),
        "segment.jitter.ms": ("0", DEFAULT, []),
        "flush.ms": ("9223372036854775807", DEFAULT, []),
        "confluent.value.schema.validation": ("false", DEFAULT, []),
    }
    assert {name: (configs[name].value, configs[name].config_source, synonyms_of(configs[name]))
            for name in expected} == expected


def test_confluent_kafka_sees_the_broker_settings_as_synonyms(trafka_session_broker):
    """librdkafka asks for synonyms: what a confluent-kafka user sees of a topic's configs."""
    from confluent_kafka.admin import AdminClient, ConfigResource

    with RawClient(trafka_session_broker.bootstrap_servers) as raw:
        make_topic(raw, "syn-confluent", {"cleanup.policy": "compact"})
    resource = ConfigResource(ConfigResource.Type.TOPIC, "syn-confluent")
    admin = AdminClient({"bootstrap.servers": trafka_session_broker.bootstrap_servers})
    configs = admin.describe_configs([resource])[resource].result(timeout=20)
    assert [(s.name, s.value) for s in configs["cleanup.policy"].synonyms.values()] == [
        ("cleanup.policy", "compact"), ("log.cleanup.policy", "delete")]
    assert [s.name for s in configs["max.message.bytes"].synonyms.values()] == ["message.max.bytes"]
    assert configs["segment.ms"].synonyms == {}
