"""Broker settings, by Kafka's names, from `--config NAME=VALUE` and `--config-file FILE`.

Only settings trafka acts on are accepted; anything else is refused at start with a clear
error, so a typo never silently does nothing. Settings named `log.*` are the broker-wide
defaults of the matching topic configs (log.segment.bytes -> segment.bytes, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from trafka.storage.config import coarser_synonyms, scale_to_ms


class ConfigError(ValueError):
    """A setting is unknown or its value is invalid."""


def _int(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise ConfigError(f"expected an integer, got {text!r}") from None
        if lo is not None and value < lo:
            raise ConfigError(f"must be at least {lo}, got {value}")
        if hi is not None and value > hi:
            raise ConfigError(f"must be at most {hi}, got {value}")
        return value

    return parse


def _float(lo: float, hi: float) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            raise ConfigError(f"expected a number, got {text!r}") from None
        if not lo <= value <= hi:
            raise ConfigError(f"must be between {lo} and {hi}, got {value}")
        return value

    return parse


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise ConfigError(f"expected true or false, got {text!r}")
    return lowered == "true"


def _choice(*options: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip()
        if value not in options:
            raise ConfigError(f"must be one of {', '.join(options)}, got {text!r}")
        return value

    return parse


def _cleanup_policy(text: str) -> str:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or any(p not in ("delete", "compact") for p in parts):
        raise ConfigError(f"must be delete, compact or compact,delete, got {text!r}")
    return ",".join(sorted(set(parts)))


def _string(text: str) -> str:
    return text.strip()


@dataclass(frozen=True)
class Setting:
    name: str
    parse: Callable[[str], object]
    default: str
    doc: str


_MAX_LONG = 2**63 - 1
_MAX_INT = 2**31 - 1

SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in [
        Setting("node.id", _int(0, _MAX_INT), "0", "this broker's node id, reported in Metadata"),
        Setting("broker.id", _int(0, _MAX_INT), "0", "alias of node.id"),
        Setting("advertised.host", _string, "", "host clients are told to connect to (default: the bound host)"),
        Setting("advertised.port", _int(0, 65535), "0", "port clients are told to connect to (default: the bound port)"),
        Setting("num.partitions", _int(1, 100000), "1", "partitions of an auto-created topic"),
        Setting("auto.create.topics.enable", _bool, "true", "create unknown topics on Metadata and Produce"),
        Setting("default.replication.factor", _int(1, 1), "1", "only 1 exists on one broker"),
        Setting("delete.topic.enable", _bool, "true", "allow DeleteTopics"),
        Setting("socket.request.max.bytes", _int(1, _MAX_INT), "104857600", "largest request frame accepted"),
        Setting("message.max.bytes", _int(0, _MAX_INT), "1048588", "largest record batch"),
        Setting("log.segment.bytes", _int(14, _MAX_INT), "1073741824", "segment size before a roll"),
        Setting("log.roll.ms", _int(1, _MAX_LONG), "604800000", "segment age before a roll"),
        Setting("log.roll.hours", _int(1, _MAX_INT), "168", "segment age before a roll, in hours (log.roll.ms wins)"),
        Setting("log.retention.ms", _int(-1, _MAX_LONG), "604800000", "age after which closed segments go"),
        Setting("log.retention.minutes", _int(-1, _MAX_INT), "10080", "retention in minutes (log.retention.ms wins)"),
        Setting("log.retention.hours", _int(-1, _MAX_INT), "168", "retention in hours (minutes and ms win)"),
        Setting("log.retention.bytes", _int(-1, _MAX_LONG), "-1", "partition size above which old segments go"),
        Setting("log.retention.check.interval.ms", _int(1, _MAX_LONG), "300000", "how often retention runs"),
        Setting("log.cleanup.policy", _cleanup_policy, "delete", "delete, compact or compact,delete"),
        Setting("log.cleaner.enable", _bool, "true", "run compaction for compacted topics"),
        Setting("log.cleaner.backoff.ms", _int(0, _MAX_LONG), "15000", "pause between cleaner passes"),
        Setting("log.cleaner.delete.retention.ms", _int(0, _MAX_LONG), "86400000", "how long tombstones stay"),
        Setting("log.cleaner.min.compaction.lag.ms", _int(0, _MAX_LONG), "0", "records younger than this are not compacted"),
        Setting("log.cleaner.max.compaction.lag.ms", _int(1, _MAX_LONG), str(_MAX_LONG), "records older than this are compacted whatever the dirty ratio"),
        Setting("log.cleaner.min.cleanable.ratio", _float(0.0, 1.0), "0.5", "dirty share of the log before it is compacted"),
        Setting("log.index.interval.bytes", _int(0, _MAX_INT), "4096", "bytes between offset index entries"),
        Setting("log.flush.interval.messages", _int(1, _MAX_LONG), str(_MAX_LONG), "fsync after this many messages"),
        Setting("log.flush.interval.ms", _int(0, _MAX_LONG), str(_MAX_LONG), "fsync after this many ms"),
        Setting("log.flush.scheduler.interval.ms", _int(1, _MAX_LONG), "1000", "how often the flusher applies flush.ms without appends (Kafka: Long.MAX)"),
        Setting("log.message.timestamp.type", _choice("CreateTime", "LogAppendTime"), "CreateTime", "which timestamp records keep"),
        Setting("log.message.timestamp.before.max.ms", _int(0, _MAX_LONG), str(_MAX_LONG), "reject records older than this"),
        Setting("log.message.timestamp.after.max.ms", _int(0, _MAX_LONG), str(_MAX_LONG), "reject records newer than this"),
        Setting("log.roll.jitter.ms", _int(0, _MAX_LONG), "0", "accepted for compatibility"),
        Setting("log.roll.jitter.hours", _int(0, _MAX_INT), "0", "accepted for compatibility"),
        Setting("log.index.size.max.bytes", _int(4, _MAX_INT), "10485760", "accepted for compatibility"),
        Setting("log.preallocate", _bool, "false", "accepted for compatibility"),
        Setting("compression.type", _choice("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"), "producer", "batches are stored as the producer sent them"),
        Setting("min.insync.replicas", _int(1, _MAX_INT), "1", "accepted; there is one replica"),
        Setting("unclean.leader.election.enable", _bool, "false", "accepted; there is one replica"),
        Setting("log.segment.delete.delay.ms", _int(0, _MAX_LONG), "60000", "accepted; deleted segments' files are removed at once"),
        Setting("offsets.topic.num.partitions", _int(1, 1000), "50", "partitions of __consumer_offsets"),
        Setting("offsets.retention.minutes", _int(1, _MAX_INT), "10080", "how long an empty group's offsets are kept"),
        Setting("offsets.retention.check.interval.ms", _int(1, _MAX_LONG), "600000", "how often expired committed offsets are removed"),
        Setting("group.initial.rebalance.delay.ms", _int(0, _MAX_INT), "0", "wait for more members before the first rebalance (Kafka: 3000; 0 suits a dev broker)"),
        Setting("group.min.session.timeout.ms", _int(0, _MAX_INT), "1000", "smallest session timeout a member may ask for"),
        Setting("group.max.session.timeout.ms", _int(0, _MAX_INT), "1800000", "largest session timeout a member may ask for"),
        Setting("transactional.id.expiration.ms", _int(1, _MAX_INT), "604800000", "a transactional id with no transaction for this long is forgotten"),
        Setting("transaction.max.timeout.ms", _int(1, _MAX_INT), "900000", "largest transaction.timeout.ms a producer may ask for"),
        Setting("transaction.state.log.num.partitions", _int(1, 1000), "50", "partitions of __transaction_state"),
        Setting("transaction.state.log.segment.bytes", _int(1024, _MAX_INT), "104857600", "segment size of __transaction_state"),
        Setting("transaction.state.log.replication.factor", _int(1, 32767), "1", "accepted; there is one replica"),
        Setting("transaction.state.log.min.isr", _int(1, _MAX_INT), "1", "accepted; there is one replica"),
        Setting("transaction.state.log.load.buffer.size", _int(1, _MAX_INT), "5242880", "accepted for compatibility"),
        Setting("transaction.abort.timed.out.transaction.cleanup.interval.ms", _int(1, _MAX_INT), "10000", "how often transactions past their timeout are aborted"),
        Setting("transaction.remove.expired.transaction.cleanup.interval.ms", _int(1, _MAX_INT), "3600000", "how often expired transactional ids are removed"),
        Setting("console.port", _int(-1, 65535), "9644", "HTTP port of the console, JSON API and /metrics, on the broker's host; 0 picks a free port, -1 turns it off"),
        Setting("console.control.enabled", _bool, "false", "serve the test-control endpoints (/api/v1/clock, /api/v1/faults, /api/v1/snapshot) even when the console listens on a non-loopback address"),
    ]
}

class BrokerConfig:
    """Parsed broker settings; `values` holds only what was set explicitly."""

    def __init__(self, values: dict[str, str] | None = None):
        self.values: dict[str, object] = {}
        self.raw: dict[str, str] = {}  # as given, for the storage layer's topic defaults
        for name, text in (values or {}).items():
            self.set(name, text)

    def set(self, name: str, text: str) -> None:
        setting = SETTINGS.get(name)
        if setting is None:
            raise ConfigError(f"unknown setting {name!r} (see docs/configuration.md)")
        try:
            self.values[name] = setting.parse(text)
            self.raw[name] = text.strip()
        except ConfigError as exc:
            raise ConfigError(f"invalid value for {name}: {exc}") from None

    def get(self, name: str):
        if name in self.values:
            return self.values[name]
        # Kafka's rule, from storage's synonym table: the finer unit wins when both are set.
        for alias, scale in coarser_synonyms(name):
            if alias in self.values:
                return scale_to_ms(self.values[alias], scale)
        if name in ("node.id",) and "broker.id" in self.values:
            return self.values["broker.id"]
        return SETTINGS[name].parse(SETTINGS[name].default)

    def __getitem__(self, name: str):
        return self.get(name)

    @classmethod
    def from_sources(cls, pairs: list[str], files: list[Path]) -> "BrokerConfig":
        values: dict[str, str] = {}
        for path in files:
            values.update(read_properties(path))
        for pair in pairs:
            name, sep, value = pair.partition("=")
            if not sep:
                raise ConfigError(f"--config takes NAME=VALUE, got {pair!r}")
            values[name.strip()] = value
        return cls(values)


def read_properties(path: Path) -> dict[str, str]:
    """Read a Java-style properties file (key=value or key: value, # and ! comments)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    values: dict[str, str] = {}
    lines = iter(text.splitlines())
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        while line.endswith("\\"):
            line = line[:-1] + next(lines, "").strip()
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep < 0:
            raise ConfigError(f"{path}:{number}: expected NAME=VALUE, got {raw!r}")
        values[line[:sep].strip()] = line[sep + 1 :].strip()
    return values
