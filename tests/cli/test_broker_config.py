"""Broker settings in coarser units (minutes, hours) mean the same to the broker's own view
(DescribeConfigs on the broker) and to the topic defaults storage applies."""

import pytest

from trafka.broker.config import BrokerConfig, ConfigError
from trafka.settings import BROKER_SETTINGS, TOPIC_CONFIGS
from trafka.storage.config import topic_defaults_from_broker, validate_topic_config
from trafka.storage.errors import InvalidConfig


@pytest.mark.parametrize(
    ("given", "broker_name", "topic_name", "expected"),
    [
        ({"log.retention.hours": "2"}, "log.retention.ms", "retention.ms", 7_200_000),
        ({"log.retention.minutes": "5", "log.retention.hours": "1"}, "log.retention.ms", "retention.ms", 300_000),
        ({"log.retention.hours": "-1"}, "log.retention.ms", "retention.ms", -1),  # no limit stays -1
        ({"log.roll.hours": "3"}, "log.roll.ms", "segment.ms", 10_800_000),
        ({"log.roll.jitter.hours": "1"}, "log.roll.jitter.ms", "segment.jitter.ms", 3_600_000),
    ],
)
def test_coarser_units_agree(given, broker_name, topic_name, expected):
    assert BrokerConfig(given)[broker_name] == expected
    assert topic_defaults_from_broker(given)[topic_name] == str(expected)


def test_the_finest_unit_given_wins():
    given = {"log.retention.ms": "1000", "log.retention.minutes": "5"}
    assert BrokerConfig(given)["log.retention.ms"] == 1000
    assert topic_defaults_from_broker(given)["retention.ms"] == "1000"


def test_a_kafka_setting_without_effect_is_accepted_and_named():
    config = BrokerConfig({"log.preallocate": "true", "num.partitions": "3", "min.insync.replicas": "2"})
    assert config["log.preallocate"] is True
    assert config.without_effect() == ["log.preallocate", "min.insync.replicas"]


@pytest.mark.parametrize(("name", "value", "message"), [
    ("log.segment.bytes", "10", "must be at least 14"),
    ("num.partitions", "x", "expected an integer"),
    ("log.cleanup.policy", "delete,forever", "every item must be one of delete, compact"),
    ("compression.type", "brotli", "must be one of producer"),
    ("advertised.port", "70000", "must be at most 65535"),
])
def test_broker_and_topic_level_share_one_validator(name, value, message):
    """A log.* setting and the topic config it is the default of refuse the same values."""
    with pytest.raises(ConfigError, match=message):
        BrokerConfig({name: value})
    topic = {"log.segment.bytes": "segment.bytes", "log.cleanup.policy": "cleanup.policy",
             "compression.type": "compression.type"}.get(name)
    if topic:
        with pytest.raises(InvalidConfig, match=message):
            validate_topic_config({topic: value})


def test_node_id_falls_back_to_broker_id():
    assert BrokerConfig({"broker.id": "4"})["node.id"] == 4
    assert BrokerConfig({"broker.id": "4", "node.id": "5"})["node.id"] == 5
    assert BrokerConfig({})["node.id"] == 0


def test_every_synonym_of_a_topic_config_is_a_broker_setting_of_its_type():
    """Every Kafka topic config has a broker default but those of LogConfig's
    CONFIGS_WITH_NO_SERVER_DEFAULTS (the throttled replica lists); Confluent Server's own topic
    configs (confluent.*: broker-side schema validation) have none, as there."""
    no_server_default = {"leader.replication.throttled.replicas", "follower.replication.throttled.replicas"}
    for name, setting in TOPIC_CONFIGS.items():
        if name.startswith("confluent.") or name in no_server_default:
            assert not setting.synonyms, name
            continue
        assert setting.synonyms, name
        finest = BROKER_SETTINGS[setting.synonyms[0]]
        assert (finest.type, finest.default, finest.validator) == (setting.type, setting.default, setting.validator)


def test_kafkas_metadata_log_settings_are_accepted_without_effect():
    """A KRaft server.properties may set where and how often the metadata log snapshots: trafka
    keeps its metadata log in the data dir and snapshots by its own rule (docs/metadata-log.md),
    so these start the broker and are named in the one warning, not refused as unknown."""
    from trafka.broker.config import BrokerConfig

    config = BrokerConfig.from_sources(["metadata.log.dir=/var/kafka/meta",
                                        "metadata.log.max.record.bytes.between.snapshots=1000000",
                                        "metadata.log.max.snapshot.interval.ms=60000"], [])
    assert config.without_effect() == ["metadata.log.dir", "metadata.log.max.record.bytes.between.snapshots",
                                       "metadata.log.max.snapshot.interval.ms"]
