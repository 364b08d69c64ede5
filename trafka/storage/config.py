"""Topic configs: a plain dict of Kafka config names -> strings, with a typed `LogConfig` view.

Three layers, as in Kafka: Kafka's own defaults, then the broker's `log.*` settings, then the
per-topic overrides that CreateTopics/AlterConfigs bring. Values stay strings everywhere but here,
so DescribeConfigs can echo them exactly as they were given.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping

from trafka.storage.errors import InvalidConfig

LONG_MAX = 2**63 - 1

# name -> (Kafka's default, type). Types: long, int, double, bool, string, list, and the enums.
TOPIC_CONFIGS: dict[str, tuple[str, str]] = {
    "cleanup.policy": ("delete", "cleanup.policy"),
    "compression.type": ("producer", "compression.type"),
    "delete.retention.ms": ("86400000", "long"),
    "file.delete.delay.ms": ("60000", "long"),
    "flush.messages": (str(LONG_MAX), "long"),
    "flush.ms": (str(LONG_MAX), "long"),
    "index.interval.bytes": ("4096", "int"),
    "max.compaction.lag.ms": (str(LONG_MAX), "long"),
    "max.message.bytes": ("1048588", "int"),
    "message.timestamp.type": ("CreateTime", "message.timestamp.type"),
    "message.timestamp.before.max.ms": (str(LONG_MAX), "long"),
    "message.timestamp.after.max.ms": (str(LONG_MAX), "long"),
    "min.cleanable.dirty.ratio": ("0.5", "double"),
    "min.compaction.lag.ms": ("0", "long"),
    "min.insync.replicas": ("1", "int"),  # accepted and ignored: there is one replica
    "preallocate": ("false", "bool"),
    "retention.bytes": ("-1", "long"),
    "retention.ms": ("604800000", "long"),
    "segment.bytes": ("1073741824", "int"),
    "segment.index.bytes": ("10485760", "int"),
    "segment.jitter.ms": ("0", "long"),
    "segment.ms": ("604800000", "long"),
    "unclean.leader.election.enable": ("false", "bool"),
}

KAFKA_DEFAULTS: dict[str, str] = {name: default for name, (default, _) in TOPIC_CONFIGS.items()}

# Broker config name -> topic config name it provides the default for (Kafka's LogConfig
# "synonyms"). Listed most specific first: log.retention.ms beats .minutes beats .hours.
BROKER_SYNONYMS: list[tuple[str, str, int]] = [
    ("log.cleanup.policy", "cleanup.policy", 1),
    ("compression.type", "compression.type", 1),
    ("log.cleaner.delete.retention.ms", "delete.retention.ms", 1),
    ("log.segment.delete.delay.ms", "file.delete.delay.ms", 1),
    ("log.flush.interval.messages", "flush.messages", 1),
    ("log.flush.interval.ms", "flush.ms", 1),
    ("log.index.interval.bytes", "index.interval.bytes", 1),
    ("log.cleaner.max.compaction.lag.ms", "max.compaction.lag.ms", 1),
    ("message.max.bytes", "max.message.bytes", 1),
    ("log.message.timestamp.type", "message.timestamp.type", 1),
    ("log.message.timestamp.before.max.ms", "message.timestamp.before.max.ms", 1),
    ("log.message.timestamp.after.max.ms", "message.timestamp.after.max.ms", 1),
    ("log.cleaner.min.cleanable.ratio", "min.cleanable.dirty.ratio", 1),
    ("log.cleaner.min.compaction.lag.ms", "min.compaction.lag.ms", 1),
    ("min.insync.replicas", "min.insync.replicas", 1),
    ("log.preallocate", "preallocate", 1),
    ("log.retention.bytes", "retention.bytes", 1),
    ("log.retention.ms", "retention.ms", 1),
    ("log.retention.minutes", "retention.ms", 60_000),
    ("log.retention.hours", "retention.ms", 3_600_000),
    ("log.segment.bytes", "segment.bytes", 1),
    ("log.index.size.max.bytes", "segment.index.bytes", 1),
    ("log.roll.jitter.ms", "segment.jitter.ms", 1),
    ("log.roll.jitter.hours", "segment.jitter.ms", 3_600_000),
    ("log.roll.ms", "segment.ms", 1),
    ("log.roll.hours", "segment.ms", 3_600_000),
    ("unclean.leader.election.enable", "unclean.leader.election.enable", 1),
]

_ENUMS = {
    "message.timestamp.type": {"CreateTime", "LogAppendTime"},
    "compression.type": {"producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"},
}


def scale_to_ms(value: int, scale: int) -> int:
    """A setting in minutes or hours as milliseconds; -1 (no limit) stays -1."""
    return value if value < 0 else value * scale


def coarser_synonyms(broker_name: str) -> list[tuple[str, int]]:
    """The broker settings in coarser units that stand in for `broker_name` when it is not set
    (log.retention.minutes, then .hours, for log.retention.ms), finest first."""
    topic = next((t for b, t, s in BROKER_SYNONYMS if b == broker_name and s == 1), None)
    return [(b, s) for b, t, s in BROKER_SYNONYMS if t == topic and s != 1]


def topic_defaults_from_broker(broker_config: Mapping[str, str]) -> dict[str, str]:
    """Topic-config defaults this broker's `log.*` settings imply (only those it sets)."""
    defaults: dict[str, str] = {}
    for broker_name, topic_name, scale in BROKER_SYNONYMS:
        if broker_name in broker_config and topic_name not in defaults:
            value = str(broker_config[broker_name])
            if scale != 1:
                value = str(scale_to_ms(_parse_value(broker_name, value, "long"), scale))
            defaults[topic_name] = value
    validate_topic_config(defaults)
    return defaults


def _parse_value(name: str, value: str, kind: str):
    try:
        if kind in ("long", "int"):
            number = int(value.strip())
            bits = 63 if kind == "long" else 31
            if not -(2**bits) <= number < 2**bits:
                raise ValueError("out of range")
            return number
        if kind == "double":
            return float(value)
        if kind == "bool":
            lowered = value.strip().lower()
            if lowered not in ("true", "false"):
                raise ValueError("not a boolean")
            return lowered == "true"
        if kind == "cleanup.policy":
            policies = {p.strip() for p in value.split(",") if p.strip()}
            if not policies or not policies <= {"delete", "compact"}:
                raise ValueError("expected delete, compact or both")
            return frozenset(policies)
        if kind in _ENUMS:
            if value not in _ENUMS[kind]:
                raise ValueError(f"expected one of {sorted(_ENUMS[kind])}")
            return value
        return value
    except ValueError as exc:
        raise InvalidConfig(f"invalid value {value!r} for configuration {name}: {exc}") from None


def validate_topic_config(overrides: Mapping[str, str]) -> None:
    """Raise InvalidConfig for an unknown name or a value that does not parse."""
    for name, value in overrides.items():
        if name not in TOPIC_CONFIGS:
            raise InvalidConfig(f"unknown topic config {name}")
        if value is None:
            raise InvalidConfig(f"null value for topic config {name}")
        _parse_value(name, str(value), TOPIC_CONFIGS[name][1])


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
        return _parse_value(name, self.values[name], TOPIC_CONFIGS[name][1])

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
        return self._get("cleanup.policy")

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

    @functools.cached_property
    def file_delete_delay_ms(self) -> int:
        return self._get("file.delete.delay.ms")
