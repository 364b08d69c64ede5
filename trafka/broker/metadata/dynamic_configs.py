"""Dynamic broker configs: the settings Kafka lets AlterConfigs and IncrementalAlterConfigs
change on a running broker, on a BROKER config resource named by the node id (this broker:
DYNAMIC_BROKER_CONFIG) or named "" (the cluster-wide default, `kafka-configs --entity-default`:
DYNAMIC_DEFAULT_BROKER_CONFIG). A per-broker value wins over the cluster default, which wins
over the static setting (`--config`) and Kafka's default, as in Kafka's DynamicBrokerConfig.

What is dynamic is Kafka 4.3's table, kept as each row's update mode in trafka/settings.py
(read-only, per-broker, cluster-wide): a per-broker setting (listeners, the SSL and SASL listener
settings) cannot be a cluster default; Kafka's key and trust store settings change only per listener
(`listener.name.<listener>.ssl.keystore.location`), and any listener setting may be given so for one
listener. Of those, what trafka acts on applies at once (`APPLIED`: the topic-config defaults `log.*`,
`message.max.bytes`, `min.insync.replicas`..., and the connection limits); the rest is stored
and reported only, as docs/compatibility.md says.

Durable in `<data dir>/broker_configs` (JSON: {"": {...}, "<node id>": {...}}), written
atomically before the answer (Kafka keeps them as ConfigRecords in its metadata log). Kafka 4.1+
(KIP-966) writes `min.insync.replicas` as a cluster default when its controller first starts;
trafka does the same when it first starts on a data dir.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from trafka.broker.config import listener_setting
from trafka.settings import BROKER_SETTINGS, TOPIC_CONFIGS, ConfigError, Update
from trafka.storage.errors import InvalidConfig, StorageError
from trafka.storage.files import atomic_write
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.broker")

CLUSTER_DEFAULT = ""


class InvalidBrokerConfig(StorageError):
    """INVALID_REQUEST: Kafka's answer to a broker config it cannot change (its
    ConfigException becomes an InvalidRequestException for BROKER resources)."""

    error_code = ErrorCode.INVALID_REQUEST

# Kafka's update modes, from the one table (trafka/settings.py, Setting.update).
_BY_MODE = {mode: frozenset(n for n, s in BROKER_SETTINGS.items() if s.update is mode) for mode in Update}
CLUSTER_WIDE = _BY_MODE[Update.CLUSTER_WIDE]
PER_BROKER_ONLY = _BY_MODE[Update.PER_BROKER] | _BY_MODE[Update.PER_LISTENER]
LISTENER_PREFIX_ONLY = _BY_MODE[Update.PER_LISTENER]
DYNAMIC = CLUSTER_WIDE | PER_BROKER_ONLY
# What a change acts on at once; every other dynamic setting is stored and reported only.
_TOPIC_DEFAULTS = {name for s in TOPIC_CONFIGS.values() for name in s.synonyms[:1]}  # the finest unit only
APPLIED = frozenset(_TOPIC_DEFAULTS | {"max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides",
                                       "max.connection.creation.rate"})


def is_listener_override(name: str) -> bool:
    """listener.name.<listener>.[<mechanism>.]<setting>: one listener's value of a setting."""
    return name not in BROKER_SETTINGS and listener_setting(name) is not None


class DynamicBrokerConfigs:
    def __init__(self, path: Path | None, config, node_id: int):
        """`path` None keeps them in memory only (a broker object built alone in a unit test)."""
        self.path = Path(path) if path is not None else None
        self.config = config
        self.node_id = node_id
        self.levels: dict[str, dict[str, str]] = self._read()
        self.on_change = lambda: None  # the broker re-reads what it applies (server.py)
        self._install()

    def _read(self) -> dict[str, dict[str, str]]:
        if self.path is None:
            return {CLUSTER_DEFAULT: self._first_start()}
        try:
            data = json.loads(self.path.read_text())
            return {str(level): {str(k): str(v) for k, v in values.items()} for level, values in data.items()}
        except FileNotFoundError:
            levels = {CLUSTER_DEFAULT: self._first_start()}
            atomic_write(self.path, json.dumps(levels, sort_keys=True, indent=1) + "\n")
            return levels
        except (ValueError, AttributeError, TypeError):
            raise StorageError(f"{self.path} is corrupt: it must hold the dynamic broker configs as JSON "
                               '({"": {"name": "value"}, "0": {...}}); fix or remove it') from None

    def _first_start(self) -> dict[str, str]:
        """KIP-966: the cluster-level min.insync.replicas, from the static setting (default 1)."""
        return {"min.insync.replicas": self.config.raw.get("min.insync.replicas", "1")}

    # --- reading ------------------------------------------------------------------------------

    def entity(self, resource_name: str) -> str | None:
        """The level a BROKER resource names ("" or this node's id), or None for another node."""
        if resource_name == CLUSTER_DEFAULT:
            return CLUSTER_DEFAULT
        return str(self.node_id) if resource_name.strip() == str(self.node_id) else None

    def overrides(self, entity: str) -> dict[str, str]:
        return dict(self.levels.get(entity, {}))

    def cluster_defaults(self) -> dict[str, str]:
        return self.overrides(CLUSTER_DEFAULT)

    def per_broker(self) -> dict[str, str]:
        return self.overrides(str(self.node_id))

    # --- changing -----------------------------------------------------------------------------

    def validate(self, entity: str, values: dict[str, str]) -> None:
        """InvalidBrokerConfig (Kafka's INVALID_REQUEST for broker resources) naming what is wrong,
        in the order of Kafka's DynamicBrokerConfig.validateConfigs."""
        resource = f"ConfigResource(type=BROKER, name='{entity}')"

        def refuse(reason: str, names) -> None:
            if names:
                raise InvalidBrokerConfig(f"Invalid config value for resource {resource}: {reason}: {sorted(names)}")

        prefixed = {n for n in values if is_listener_override(n)}
        refuse("unknown broker configs", [n for n in values if n not in BROKER_SETTINGS and n not in prefixed])
        refuse("Cannot update these configs dynamically", [n for n in values if n in BROKER_SETTINGS and n not in DYNAMIC])
        refuse("These security configs can be dynamically updated only per-listener using the listener prefix",
               [n for n in values if n in LISTENER_PREFIX_ONLY])
        for name, text in values.items():
            try:
                (BROKER_SETTINGS.get(name) or listener_setting(name)).parse(text)
            except ConfigError as exc:
                raise InvalidBrokerConfig(f"Invalid config value for resource {resource}: "
                                          f"Invalid value {text} for configuration {name}: {exc}") from None
        if entity == CLUSTER_DEFAULT:
            refuse("Cannot update these configs at default cluster level, broker id must be specified",
                   [n for n in values if n in PER_BROKER_ONLY or n in prefixed])
        from trafka.storage.config import topic_defaults_from_broker

        levels = {**self.levels, entity: values}
        try:
            topic_defaults_from_broker(self._effective_raw(levels))
        except InvalidConfig as exc:
            raise InvalidBrokerConfig(f"Invalid config value for resource {resource}: {exc}") from None

    def alter(self, entity: str, values: dict[str, str], validate_only: bool) -> None:
        """Replace the level's dynamic configs with `values`: validated, durable, then applied."""
        values = {k: str(v).strip() for k, v in values.items()}
        self.validate(entity, values)
        if validate_only:
            return
        levels = {**self.levels, entity: values}
        if not values:
            levels.pop(entity)
        if self.path is not None:
            atomic_write(self.path, json.dumps(levels, sort_keys=True, indent=1) + "\n")
        changed = sorted(set(values.items()) ^ set(self.levels.get(entity, {}).items()))
        self.levels = levels
        self._install()
        self.on_change()
        log.info("dynamic broker configs (%s): %s", "cluster default" if entity == CLUSTER_DEFAULT else f"broker {entity}",
                 ", ".join(sorted({name for name, _ in changed})) or "unchanged")

    # --- applying -----------------------------------------------------------------------------

    def _install(self) -> None:
        applied = lambda values: {k: v for k, v in values.items() if k in APPLIED}  # noqa: E731
        self.config.set_dynamic(applied(self.cluster_defaults()), applied(self.per_broker()))

    def _effective_raw(self, levels: dict[str, dict[str, str]]) -> dict[str, str]:
        return {**self.config.raw, **levels.get(CLUSTER_DEFAULT, {}), **levels.get(str(self.node_id), {})}
