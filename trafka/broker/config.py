"""Broker settings, by Kafka's names, from `--config NAME=VALUE` and `--config-file FILE`.

Names, types, defaults and validators come from the one table, trafka/settings.py. A name not
in it is refused at start with a clear error, so a typo never silently does nothing; a known
Kafka setting trafka does not act on is accepted and named in one warning at start. Settings
named `log.*` are the broker-wide defaults of the matching topic configs.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from trafka.settings import BROKER_SETTINGS, ConfigError, Setting, scale_to_ms, unit_scale

__all__ = ["SETTINGS", "BrokerConfig", "ConfigError", "Setting", "listener_setting", "read_properties"]

# The broker-level rows of the one table of settings (trafka/settings.py).
SETTINGS: dict[str, Setting] = BROKER_SETTINGS


class BrokerConfig:
    """Parsed broker settings; `values` holds only what was set explicitly."""

    def __init__(self, values: dict[str, str] | None = None):
        self.values: dict[str, object] = {}
        self.raw: dict[str, str] = {}  # as given, for the storage layer's topic defaults
        # Dynamic broker configs in force (dynamic_configs.py): this broker's, then the cluster
        # default's, each over the static values; typed, and as text.
        self.dynamic: list[dict[str, object]] = []
        self.dynamic_raw: dict[str, str] = {}
        for name, text in (values or {}).items():
            self.set(name, text)

    def set(self, name: str, text: str) -> None:
        setting = SETTINGS.get(name) or listener_setting(name)
        if setting is None:
            close = difflib.get_close_matches(name, SETTINGS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"unknown setting {name!r}{hint} (see docs/configuration.md)")
        try:
            self.values[name] = setting.parse(text)
            self.raw[name] = str(text).strip()
        except ConfigError as exc:
            raise ConfigError(f"invalid value for {name}: {exc}") from None

    def set_dynamic(self, cluster_default: dict[str, str], per_broker: dict[str, str]) -> None:
        """Install the dynamic configs trafka acts on (already validated)."""
        self.dynamic = [{n: SETTINGS[n].parse(t) for n, t in level.items()} for level in (per_broker, cluster_default)]
        self.dynamic_raw = {**cluster_default, **per_broker}

    def effective_raw(self) -> dict[str, str]:
        """The settings in force as text: static, then dynamic over them."""
        return {**self.raw, **self.dynamic_raw}

    def get(self, name: str):
        for level in self.dynamic:
            if name in level:
                return level[name]
        return self.static(name)

    def static(self, name: str):
        """The value given at start, else Kafka's default: what dynamic configs sit over."""
        if name in self.values:
            return self.values[name]
        # Kafka's rule: the setting itself, else its synonyms finest unit first, else the default.
        setting = SETTINGS[name]
        for synonym in setting.synonyms:
            if synonym in self.values:
                return scale_to_ms(self.values[synonym], unit_scale(name, synonym))
        return setting.default_value()

    def without_effect(self) -> list[str]:
        """The settings given that trafka accepts but does not act on (the broker warns once);
        those only a simulated cluster acts on count when there is one broker."""
        one_broker = self["cluster.brokers"] == 1
        return sorted(name for name in self.values
                      if not (SETTINGS.get(name) or listener_setting(name)).effect
                      or (one_broker and name in CLUSTER_ONLY))

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


# What only a simulated cluster (cluster.brokers > 1) acts on: replication and elections.
CLUSTER_ONLY = frozenset({
    "min.insync.replicas", "unclean.leader.election.enable", "replica.lag.time.max.ms",
    "offsets.topic.replication.factor", "transaction.state.log.replication.factor",
    "share.coordinator.state.topic.replication.factor", "auto.leader.rebalance.enable",
    "leader.imbalance.check.interval.seconds", "leader.imbalance.per.broker.percentage", "replica.selector.class",
    "cluster.broker.racks", "cluster.broker.ports",
})

# listener.name.<listener>.[<mechanism>.]<setting> overrides <setting> for one listener.
_LISTENER_PREFIXED = re.compile(r"^listener\.name\.[a-z0-9_]+\.(?:(?:plain|scram-sha-256|scram-sha-512|oauthbearer)\.)?(.+)$")


def listener_setting(name: str) -> Setting | None:
    """The setting a listener-prefixed name overrides for one listener (a row the table marks
    `listener`), or None when `name` is not one."""
    match = _LISTENER_PREFIXED.match(name)
    setting = SETTINGS.get(match.group(1)) if match else None
    return setting if setting is not None and setting.listener else None


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
