"""A topic's configs as DescribeConfigs and CreateTopics report them: value, source, synonyms.

Layers, as in Kafka: a per-topic override (TOPIC_CONFIG), the broker's `log.*` setting (this
broker's dynamic value, the cluster's dynamic default, the value it was started with), Kafka's
default (DEFAULT_CONFIG). The synonyms are named after the broker settings (log.cleanup.policy,
message.max.bytes), as Kafka's ConfigHelper lists them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from trafka.settings import BROKER_SETTINGS, TOPIC_CONFIGS, ConfigType
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


# What Kafka's broker ConfigDef says beyond trafka's table, for the synonyms DescribeConfigs
# lists: these broker settings have no default of their own (null; a coarser setting gives the
# value in force), and log.flush.interval.ms falls back to log.flush.scheduler.interval.ms
# (Kafka's brokerConfigSynonyms; trafka's flush.ms does not, its scheduler runs every second).
_NO_KAFKA_DEFAULT = frozenset({"log.retention.ms", "log.roll.ms", "log.roll.jitter.ms", "log.flush.interval.ms"})
_FALLBACKS = {"log.flush.interval.ms": ("log.flush.scheduler.interval.ms",)}


def _broker_synonyms(broker, name: str, dynamic_defaults: dict, per_broker: dict) -> list[tuple[str, str, ConfigSource]]:
    """The broker settings behind topic config `name` as Kafka's ConfigHelper lists them: per
    source (this broker's dynamic value, the cluster's dynamic default, the static setting,
    Kafka's broker default) each synonym finest unit first, and nothing before the first entry
    of the finest-unit setting itself, so a topic config whose value comes only from
    log.retention.hours or log.roll.hours lists no synonym and reads as DEFAULT_CONFIG."""
    names = TOPIC_CONFIGS[name].synonyms
    if not names:
        return []
    names = names + _FALLBACKS.get(names[0], ())
    defaults = {n: BROKER_SETTINGS[n].default for n in names
                if n not in _NO_KAFKA_DEFAULT and BROKER_SETTINGS[n].default is not None}
    synonyms = [(n, values[n], source)
                for values, source in ((per_broker, ConfigSource.DYNAMIC_BROKER_CONFIG),
                                       (dynamic_defaults, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
                                       (broker.config.raw, ConfigSource.STATIC_BROKER_CONFIG),
                                       (defaults, ConfigSource.DEFAULT_CONFIG))
                for n in names if n in values]
    first = next((i for i, (n, _, _) in enumerate(synonyms) if n == names[0]), len(synonyms))
    return synonyms[first:]


def topic_config_entries(broker, overrides: dict[str, str]) -> list[ConfigEntry]:
    """Every topic config with the value in force for a topic with these overrides, its
    source and its synonyms as Kafka's ConfigHelper reports them."""
    entries = []
    dynamic_defaults = cluster_dynamic_defaults(broker)
    per_broker = broker.dynamic_configs.per_broker()
    for name in sorted(KAFKA_DEFAULTS):
        synonyms = _broker_synonyms(broker, name, dynamic_defaults, per_broker)
        if name in overrides:
            synonyms.insert(0, (name, overrides[name], ConfigSource.TOPIC_CONFIG))
        source = synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG
        # the value in force, a broker synonym in hours or minutes in the topic config's own unit
        value = overrides[name] if name in overrides else broker.logs.topic_defaults.get(name, KAFKA_DEFAULTS[name])
        entries.append(ConfigEntry(name, value, source, synonyms))
    return entries
