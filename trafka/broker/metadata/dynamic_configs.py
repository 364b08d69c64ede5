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
`message.max.bytes`, `min.insync.replicas`..., the connection limits and
`transaction.partition.verification.enable`); the rest is stored
and reported only, as docs/compatibility.md says. A name trafka does not know is accepted and
stored as Kafka does (a plugin's own setting: Kafka validates only the configs it defines) and
described as Kafka describes a config without a type (handlers/describe_configs.py); a listener
prefix on a setting trafka does not read per listener is still refused.

Kept as Kafka keeps them: ConfigRecords on resource type BROKER (named "" or the node id) in the
metadata log (image.py), fsynced before the answer and applied only then. Kafka 4.1+ (KIP-966)
writes `min.insync.replicas` as a cluster default when its controller first starts; trafka does
the same when it first starts on a data dir (an empty metadata log).
"""

from __future__ import annotations

import logging

from trafka.broker.config import listener_setting
from trafka.broker.metadata.image import ClusterMetadata
from trafka.broker.metadata.records import BROKER, config_changes, replay_configs
from trafka.settings import BROKER_SETTINGS, TOPIC_CONFIGS, ConfigError, Update
from trafka.storage.errors import InvalidConfig, StorageError
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
                                       "max.connection.creation.rate", "transaction.partition.verification.enable"})


def is_listener_override(name: str) -> bool:
    """listener.name.<listener>.[<mechanism>.]<setting>: one listener's value of a setting."""
    return name not in BROKER_SETTINGS and listener_setting(name) is not None


class DynamicBrokerConfigs:
    def __init__(self, metadata, config, node_id: int):
        """`metadata`: the broker's ClusterMetadata; None keeps them in memory only (a broker
        object built alone in a unit test)."""
        self.config = config
        self.node_id = node_id
        self.levels: dict[str, dict[str, str]] = {}
        self.on_change = lambda: None  # the broker re-reads what it applies (server.py)
        self.metadata = ClusterMetadata.of(metadata)
        self.metadata.register(["ConfigRecord"], self._replay)
        if self.metadata.fresh and "min.insync.replicas" not in self.levels.get(CLUSTER_DEFAULT, {}):
            self.metadata.write(config_changes(BROKER, CLUSTER_DEFAULT, {}, self._first_start()))
        self._install()

    def _replay(self, record) -> None:
        if record.fields["resource_type"] == BROKER and record.fields["resource_name"] in (CLUSTER_DEFAULT, str(self.node_id)):
            replay_configs(self.levels, record)

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
        refuse("listener prefix on a setting not read per listener",
               [n for n in values if n.startswith("listener.name.") and n not in prefixed])
        refuse("Cannot update these configs dynamically", [n for n in values if n in BROKER_SETTINGS and n not in DYNAMIC])
        refuse("These security configs can be dynamically updated only per-listener using the listener prefix",
               [n for n in values if n in LISTENER_PREFIX_ONLY])
        for name, text in values.items():
            setting = BROKER_SETTINGS.get(name) or listener_setting(name)
            if setting is None:  # a name Kafka does not type either: a plugin's own setting, kept as given
                continue
            try:
                setting.parse(text)
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
        changed = sorted(set(values.items()) ^ set(self.levels.get(entity, {}).items()))
        self.metadata.write(config_changes(BROKER, entity, self.levels.get(entity, {}), values))
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
