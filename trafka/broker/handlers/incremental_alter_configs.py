"""IncrementalAlterConfigs (key 44), versions 0-1.

Behavior:
- SET, DELETE, APPEND and SUBTRACT on a topic's overrides; APPEND and SUBTRACT only for list
  configs (cleanup.policy), INVALID_CONFIG otherwise, as in Kafka. A list may be SUBTRACTed to
  nothing: an empty cleanup.policy keeps every record (KIP-1161).
- Groups (type 32): SET and DELETE of the group configs Kafka defines (group_configs.py),
  validated against the broker's group.*.min/max bounds (INVALID_CONFIG with Kafka's message);
  the group need not exist; ALTER_CONFIGS on the group is checked.
- Brokers (this node's id, or "" for the cluster-wide default): the dynamic broker configs
  Kafka allows (dynamic_configs.py), validated (INVALID_REQUEST with Kafka's message), stored
  durably and applied where trafka acts on them; a name trafka does not know (a plugin's
  setting) is stored as Kafka stores it.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import Op
from trafka.broker.requests.config_changes import alter_resource, config_authorization_error, response
from trafka.settings import TOPIC_CONFIGS, ConfigType
from trafka.storage.config import KAFKA_DEFAULTS
from trafka.storage.errors import InvalidConfig

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _items(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def apply_operations(configs, current: dict) -> dict:
    result = dict(current)
    for c in configs:
        if c.config_operation == SET:
            if c.value is None:
                raise InvalidConfig(f"null value for {c.name}")
            result[c.name] = c.value
        elif c.config_operation == DELETE:
            result.pop(c.name, None)
        elif c.config_operation in (APPEND, SUBTRACT):
            if c.name not in TOPIC_CONFIGS or TOPIC_CONFIGS[c.name].type != ConfigType.LIST:
                raise InvalidConfig(f"{c.name} is not a list config: APPEND and SUBTRACT do not apply")
            items = _items(result.get(c.name, KAFKA_DEFAULTS[c.name]))
            change = _items(c.value or "")
            if c.config_operation == APPEND:
                items += [i for i in change if i not in items]
            else:
                items = [i for i in items if i not in change]
            result[c.name] = ",".join(items)
        else:
            raise InvalidConfig(f"unknown config operation {c.config_operation}")
    return result


@routes.handles(44, min_version=0, max_version=1)
async def handle(ctx, request):
    return {
        "throttle_time_ms": 0,
        "responses": [
            response(r, refused) if (refused := config_authorization_error(ctx, r, Op.ALTER_CONFIGS)) else
            alter_resource(ctx.broker, r, request.validate_only, lambda current, r=r: apply_operations(r.configs, current))
            for r in request.resources
        ],
    }
