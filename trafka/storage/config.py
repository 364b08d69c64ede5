"""Topic configs: a plain dict of Kafka config names -> strings, with a typed `LogConfig` view.

Three layers, as in Kafka: Kafka's own defaults, then the broker's `log.*` settings, then the
per-topic overrides that CreateTopics/AlterConfigs bring. Values stay strings everywhere but here,
so DescribeConfigs can echo them exactly as they were given.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping

from trafka.settings import BROKER_SETTINGS, LONG_MAX, TOPIC_CONFIGS, ConfigError, scale_to_ms, unit_scale
from trafka.storage.errors import InvalidConfig

__all__ = ["KAFKA_DEFAULTS", "LONG_MAX", "LogConfig", "TOPIC_CONFIGS", "topic_defaults_from_broker", "validate_topic_config"]

# The table of settings (trafka/settings.py) is the one home of names, types, defaults and
# validators; this module is storage's typed view of the topic-level rows.
KAFKA_DEFAULTS: dict[str, str] = {name: s.default for name, s in TOPIC_CONFIGS.items()}


def topic_defaults_from_broker(broker_config: Mapping[str, str]) -> dict[str, str]:
    """Topic-config defaults this broker's `log.*` settings imply (only those it sets); of
    several synonyms set, the finest unit wins (log.retention.ms over .minutes over .hours)."""
    defaults: dict[str, str] = {}
    for topic_name, setting in TOPIC_CONFIGS.items():
        for broker_name in setting.synonyms:
            if broker_name in broker_config:
                value = str(broker_config[broker_name]).strip()
                scale = unit_scale(topic_name, broker_name)
                if scale != 1:
                    try:
                        value = str(scale_to_ms(BROKER_SETTINGS[broker_name].parse(value), scale))
                    except ConfigError as exc:
                        raise InvalidConfig(f"invalid value {value!r} for configuration {broker_name}: {exc}") from None
                defaults[topic_name] = value
                break
    validate_topic_config(defaults)
    return defaults


def _parse_value(name: str, value: str):
    try:
        return TOPIC_CONFIGS[name].parse(value)
    except ConfigError as exc:
        raise InvalidConfig(f"invalid value {value!r} for configuration {name}: {exc}") from None


def validate_topic_config(overrides: Mapping[str, str]) -> None:
    """Raise InvalidConfig for an unknown name or a value that does not parse."""
    for name, value in overrides.items():
        if name not in TOPIC_CONFIGS:
            raise InvalidConfig(f"unknown topic config {name}")
        if value is None:
            raise InvalidConfig(f"null value for topic config {name}")
        _parse_value(name, str(value))


@dataclass(frozen=True)
class LogConfig:
    """The typed view one partition log reads. Build it with `LogConfig.of(...)`; a config
    change builds a new one. Each value is parsed once, on first use."""

    values: Mapping[str, str]

    @classmethod
    def of(cls, *layers: Mapping[str, str]) -> "LogConfig":
        """Kafka's defaults overlaid by each layer in turn (broker defaults, then topic)."""
        merged = dict(KAFKA_DEFAULTS)
        for layer in layers:
            validate_topic_config(layer)
            merged.update({k: str(v) for k, v in layer.items()})
        return cls(merged)

    def _get(self, name: str):
        return _parse_value(name, self.values[name])

    @functools.cached_property
    def schema_validation(self) -> tuple[bool, bool]:
        """(key, value): confluent.{key,value}.schema.validation."""
        return self._get("confluent.key.schema.validation"), self._get("confluent.value.schema.validation")

    @functools.cached_property
    def min_insync_replicas(self) -> int:
        """What acks=all needs in sync (a simulated cluster's replicated partitions)."""
        return self._get("min.insync.replicas")

    @functools.cached_property
    def unclean_leader_election(self) -> bool:
        return self._get("unclean.leader.election.enable")

    @functools.cached_property
    def segment_bytes(self) -> int:
        return self._get("segment.bytes")

    @functools.cached_property
    def segment_ms(self) -> int:
        return self._get("segment.ms")

    @functools.cached_property
    def retention_ms(self) -> int:
        return self._get("retention.ms")

    @functools.cached_property
    def retention_bytes(self) -> int:
        return self._get("retention.bytes")

    @functools.cached_property
    def cleanup_policy(self) -> frozenset[str]:
        return frozenset(self._get("cleanup.policy"))

    @functools.cached_property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @functools.cached_property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    @functools.cached_property
    def max_message_bytes(self) -> int:
        return self._get("max.message.bytes")

    @functools.cached_property
    def log_append_time(self) -> bool:
        return self._get("message.timestamp.type") == "LogAppendTime"

    @functools.cached_property
    def index_interval_bytes(self) -> int:
        return self._get("index.interval.bytes")

    @functools.cached_property
    def flush_messages(self) -> int:
        return self._get("flush.messages")

    @functools.cached_property
    def flush_ms(self) -> int:
        return self._get("flush.ms")

    @functools.cached_property
    def delete_retention_ms(self) -> int:
        return self._get("delete.retention.ms")

    @functools.cached_property
    def min_compaction_lag_ms(self) -> int:
        return self._get("min.compaction.lag.ms")

    @functools.cached_property
    def max_compaction_lag_ms(self) -> int:
        return self._get("max.compaction.lag.ms")

    @functools.cached_property
    def min_cleanable_dirty_ratio(self) -> float:
        return self._get("min.cleanable.dirty.ratio")
