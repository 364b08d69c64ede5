"""DescribeConfigs (key 32), versions 1-4.

Behavior:
- Topics: every topic config with its value in force and its source (topic override, the
  broker's `log.*` setting, or Kafka's default), with synonyms when asked: the broker settings
  behind it as Kafka lists them (log.cleanup.policy, message.max.bytes; none before the
  finest-unit one, so retention.ms and segment.ms list nothing on a broker that leaves
  log.retention.ms and log.roll.ms unset), topic_configs.py.
- Broker (this node's id): the settings trafka accepts, with the value in force and its source:
  this broker's dynamic config (DYNAMIC_BROKER_CONFIG), the cluster-wide dynamic default
  (DYNAMIC_DEFAULT_BROKER_CONFIG), the settings given at start (STATIC_BROKER_CONFIG), else
  DEFAULT_CONFIG; read_only unless Kafka 4.3 lets it change dynamically (the update mode of
  trafka/settings.py: `advertised.listeners` is read-only since KAFKA-18405). One listener's value
  of a setting (`listener.name.<listener>.<setting>`), static or dynamic, is listed under its own
  name with the setting as its synonym, read_only as Kafka reports it. Resource name "" (the
  cluster default entity) lists only the dynamic defaults, as Kafka does. A dynamic config
  trafka does not know (a plugin's) is listed as Kafka lists one its ConfigDef has no type for:
  sensitive (no value), type UNKNOWN, read-only. The settings
  a KRaft node cannot start without (process.roles, listeners, advertised.listeners, log.dirs)
  read as a one-node Kafka 4 reports them: STATIC_BROKER_CONFIG with the values in force.
- Groups (type 32, KIP-848 and KIP-932 group configs): every group config with the group's
  own value (GROUP_CONFIG) or the broker setting it falls back to; the group need not exist.
- Broker loggers and other resource types: INVALID_REQUEST.
- Documentation (v3+) is the one-line description trafka keeps for each setting.
- A null or an empty key list asks for every config of the resource, as in Kafka.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.requests.config_changes import config_authorization_error
from trafka.broker.security.authorizer import Op
from trafka.broker.config import SETTINGS, listener_setting
from trafka.broker.metadata.dynamic_configs import is_listener_override
from trafka.broker.metadata.group_configs import GROUP_CONFIGS
from trafka.settings import ConfigType
from trafka.broker.metadata.topic_configs import ConfigSource, ResourceType, cluster_dynamic_defaults, topic_config_entries
from trafka.storage.errors import UnknownTopic
from trafka.wire.errors import ErrorCode

def resource_error(resource, error: ErrorCode, message: str) -> dict:
    return {
        "error_code": error,
        "error_message": message,
        "resource_type": resource.resource_type,
        "resource_name": resource.resource_name,
        "configs": [],
    }


def _wanted(resource, name: str) -> bool:
    """Kafka lists every config for a null or an empty key list, in every version."""
    return not resource.configuration_keys or name in resource.configuration_keys


def _topic_configs(broker, resource, include_synonyms: bool) -> list[dict]:
    overrides = broker.logs.topic(resource.resource_name).configs
    return [
        {
            "name": e.name,
            "value": e.value,
            "read_only": False,
            "config_source": e.source,
            "is_sensitive": False,
            "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in e.synonyms] if include_synonyms else [],
            "config_type": e.config_type,
        }
        for e in topic_config_entries(broker, overrides)
        if _wanted(resource, e.name)
    ]


def _kraft_identity(broker) -> dict[str, str]:
    """The settings every KRaft node's server.properties must give, as this broker runs them
    (the listeners it bound, its data dir), so they read as a one-node Kafka 4 reports them."""
    data_dir = str(broker.data_dir.resolve())
    return {
        "process.roles": "broker,controller",
        "listeners": ",".join(str(listener) for listener in broker.listeners),
        "advertised.listeners": ",".join(
            "{}://{}:{}".format(listener.name, *listener.advertised) for listener in broker.listeners
        ),
        "log.dirs": data_dir,
        "log.dir": data_dir,
    }


def _broker_configs(broker, resource, include_synonyms: bool) -> list[dict]:
    configs = []
    in_force = _kraft_identity(broker)
    dynamic_defaults = cluster_dynamic_defaults(broker)
    per_broker = broker.dynamic_configs.per_broker()
    default_entity = resource.resource_name == ""
    overrides = {n for n in (*broker.config.raw, *per_broker, *dynamic_defaults) if is_listener_override(n)}
    for name in sorted({*SETTINGS, *overrides}):
        setting = SETTINGS.get(name) or listener_setting(name)
        if not _wanted(resource, name) or (default_entity and name not in dynamic_defaults):
            continue
        if name in in_force and broker.listeners:
            source, text = ConfigSource.STATIC_BROKER_CONFIG, in_force[name]
        elif name in overrides:
            source, text = ConfigSource.STATIC_BROKER_CONFIG, broker.config.raw.get(name)
        else:
            source = ConfigSource.STATIC_BROKER_CONFIG if name in broker.config.raw else ConfigSource.DEFAULT_CONFIG
            text = setting.format(broker.config.static(name))
        hidden = lambda value: None if setting.sensitive else value  # noqa: E731
        synonyms = [(name, hidden(text), source)] if text is not None or name not in overrides else []
        if name in dynamic_defaults:  # the cluster-level dynamic default wins over static settings
            synonyms.insert(0, (name, hidden(dynamic_defaults[name]), ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG))
        if name in per_broker and not default_entity:  # and this broker's own over both
            synonyms.insert(0, (name, hidden(per_broker[name]), ConfigSource.DYNAMIC_BROKER_CONFIG))
        if name in overrides:  # then what every listener without its own value takes, as Kafka lists it
            base = setting.name
            base_source = ConfigSource.STATIC_BROKER_CONFIG if base in broker.config.raw else ConfigSource.DEFAULT_CONFIG
            synonyms.append((base, hidden(setting.format(broker.config.static(base))), base_source))
        _, text, source = synonyms[0]
        configs.append({
            "name": name,
            "value": text,
            # Kafka's rule (ConfigHelper): read-only unless the name itself is a dynamic setting,
            # so one listener's override reads read-only even when it was set dynamically
            "read_only": not (name in SETTINGS and setting.dynamic),
            "config_source": source,
            "is_sensitive": setting.sensitive,
            "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in synonyms] if include_synonyms else [],
            "config_type": setting.type,
            "documentation": setting.doc,
        })
    unknown = _untyped_configs(per_broker if not default_entity else {}, dynamic_defaults, resource, include_synonyms)
    return sorted(configs + unknown, key=lambda c: c["name"]) if unknown else configs


def _untyped_configs(per_broker: dict, dynamic_defaults: dict, resource, include_synonyms: bool) -> list[dict]:
    """Dynamic broker configs trafka does not know (a plugin's own settings), as Kafka's
    ConfigHelper lists a config its ConfigDef has no type for: sensitive, so without a value,
    type UNKNOWN, read-only, its own name as the synonym of each dynamic level that sets it."""
    names = {n for n in (*per_broker, *dynamic_defaults) if n not in SETTINGS and not is_listener_override(n)}
    configs = []
    for name in sorted(n for n in names if _wanted(resource, n)):
        synonyms = [(name, None, source) for values, source in ((per_broker, ConfigSource.DYNAMIC_BROKER_CONFIG),
                                                                (dynamic_defaults, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG))
                    if name in values]
        configs.append({
            "name": name, "value": None, "read_only": True, "config_source": synonyms[0][2], "is_sensitive": True,
            "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in synonyms] if include_synonyms else [],
            "config_type": ConfigType.UNKNOWN, "documentation": None,
        })
    return configs


def _group_configs(broker, resource, include_synonyms: bool) -> list[dict]:
    """Every group config Kafka defines, with the group's own value (GROUP_CONFIG) or the
    broker's setting it falls back to; the group need not exist."""
    overrides = broker.group_configs.overrides(resource.resource_name)
    configs = []
    for name, config in sorted(GROUP_CONFIGS.items()):
        if not _wanted(resource, name):
            continue
        synonyms = []
        if name in overrides:
            synonyms.append((name, overrides[name], ConfigSource.GROUP_CONFIG))
        if config.default_setting is not None:
            setting = config.default_setting
            source = ConfigSource.STATIC_BROKER_CONFIG if setting in broker.config.raw else ConfigSource.DEFAULT_CONFIG
            synonyms.append((setting, SETTINGS[setting].format(broker.config[setting]), source))
        else:
            synonyms.append((name, config.default, ConfigSource.DEFAULT_CONFIG))
        _, value, source = synonyms[0]
        configs.append({
            "name": name, "value": value, "read_only": False, "config_source": source, "is_sensitive": False,
            "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in synonyms] if include_synonyms else [],
            "config_type": ConfigType.INT if config.kind == "int" else ConfigType.STRING,
            "documentation": config.doc,
        })
    return configs


def _client_metrics_configs(broker, resource, include_synonyms: bool) -> list[dict]:
    """A client-metrics subscription's configs (KIP-714), set ones as CLIENT_METRICS_CONFIG."""
    from trafka.broker.operations.telemetry import DEFAULT_INTERVAL_MS, SUBSCRIPTION_CONFIGS

    values = broker.client_metrics.overrides(resource.resource_name)
    defaults = {"metrics": "", "interval.ms": str(DEFAULT_INTERVAL_MS), "match": ""}
    configs = []
    for name, doc in sorted(SUBSCRIPTION_CONFIGS.items()):
        if not _wanted(resource, name):
            continue
        source = ConfigSource.CLIENT_METRICS_CONFIG if name in values else ConfigSource.DEFAULT_CONFIG
        value = values.get(name, defaults[name])
        configs.append({
            "name": name, "value": value, "read_only": False, "config_source": source, "is_sensitive": False,
            "synonyms": [{"name": name, "value": value, "source": source}] if include_synonyms else [],
            "config_type": ConfigType.INT if name == "interval.ms" else ConfigType.LIST, "documentation": doc,
        })
    return configs


def _describe(broker, resource, include_synonyms: bool) -> dict:
    if resource.resource_type == ResourceType.TOPIC:
        try:
            configs = _topic_configs(broker, resource, include_synonyms)
        except UnknownTopic:
            return resource_error(resource, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {resource.resource_name} does not exist")
    elif resource.resource_type == ResourceType.BROKER:
        if resource.resource_name not in ("", str(broker.node_id)):
            return resource_error(resource, ErrorCode.INVALID_REQUEST, f"this broker is node {broker.node_id}")
        configs = _broker_configs(broker, resource, include_synonyms)
    elif resource.resource_type == ResourceType.GROUP:
        configs = _group_configs(broker, resource, include_synonyms)
    elif resource.resource_type == ResourceType.CLIENT_METRICS:
        configs = _client_metrics_configs(broker, resource, include_synonyms)
    else:
        return resource_error(resource, ErrorCode.INVALID_REQUEST, f"resource type {resource.resource_type} is not supported")
    return {
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "resource_type": resource.resource_type,
        "resource_name": resource.resource_name,
        "configs": configs,
    }


@routes.handles(32, min_version=1, max_version=4)
async def handle(ctx, request):
    return {
        "throttle_time_ms": 0,
        "results": [
            resource_error(r, refused, None) if (refused := config_authorization_error(ctx, r, Op.DESCRIBE_CONFIGS)) else
            _describe(ctx.broker, r, request.include_synonyms)
            for r in request.resources
        ],
    }
