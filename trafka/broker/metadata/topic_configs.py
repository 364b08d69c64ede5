"""A topic's configs as DescribeConfigs and CreateTopics report them: value, source, synonyms.

Three layers, as in Kafka: a per-topic override (TOPIC_CONFIG), the broker's `log.*`
setting it was started with (STATIC_BROKER_CONFIG), Kafka's default (DEFAULT_CONFIG).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from trafka.settings import TOPIC_CONFIGS, ConfigType
from trafka.storage.config import KAFKA_DEFAULTS

__all__ = ["ConfigEntry", "ConfigSource", "ConfigType", "ResourceType", "cluster_dynamic_defaults", "topic_config_entries"]


class ResourceType(IntEnum):
    """The config resources DescribeConfigs and (Incremental)AlterConfigs name."""

    TOPIC = 2
    BROKER = 4
    CLIENT_METRICS = 16
    GROUP = 32


class ConfigSource(IntEnum):
    UNKNOWN = 0
    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    value: str
    source: ConfigSource
    synonyms: list[tuple[str, str, ConfigSource]]  # most specific first, the entry's own included

    @property
    def config_type(self) -> ConfigType:
        return TOPIC_CONFIGS[self.name].type


def cluster_dynamic_defaults(broker) -> dict[str, str]:
    """The cluster-level dynamic broker configs (Kafka's `--entity-default`) in force
    (dynamic_configs.py). Kafka 4.1+ (KIP-966) writes `min.insync.replicas` there when its
    controller first starts, with the static value (default 1), so every topic and broker reports
    it as DYNAMIC_DEFAULT_BROKER_CONFIG; trafka does the same."""
    return broker.dynamic_configs.cluster_defaults()


def topic_config_entries(broker, overrides: dict[str, str]) -> list[ConfigEntry]:
    """Every topic config with the value in force for a topic with these overrides."""
    entries = []
    dynamic_defaults = cluster_dynamic_defaults(broker)
    per_broker = broker.dynamic_configs.per_broker()
    for name in sorted(KAFKA_DEFAULTS):
        synonyms = []
        if name in overrides:
            synonyms.append((name, overrides[name], ConfigSource.TOPIC_CONFIG))
        for broker_name in TOPIC_CONFIGS[name].synonyms:
            if broker_name in per_broker:
                synonyms.append((broker_name, per_broker[broker_name], ConfigSource.DYNAMIC_BROKER_CONFIG))
        for broker_name in TOPIC_CONFIGS[name].synonyms:
            if broker_name in dynamic_defaults:
                synonyms.append((broker_name, dynamic_defaults[broker_name], ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG))
        for broker_name in TOPIC_CONFIGS[name].synonyms:
            if broker_name in broker.config.raw:
                synonyms.append((broker_name, broker.config.raw[broker_name], ConfigSource.STATIC_BROKER_CONFIG))
        synonyms.append((name, KAFKA_DEFAULTS[name], ConfigSource.DEFAULT_CONFIG))
        source = synonyms[0][2]
        # A broker synonym in hours or minutes is reported as the topic config's own unit.
        value = broker.logs.topic_defaults.get(name, KAFKA_DEFAULTS[name]) if source == ConfigSource.STATIC_BROKER_CONFIG else synonyms[0][1]
        entries.append(ConfigEntry(name, value, source, synonyms))
    return entries
