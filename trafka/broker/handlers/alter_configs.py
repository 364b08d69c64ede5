"""AlterConfigs (key 33), versions 0-2.

Behavior:
- Replaces the topic's whole set of overrides, as in Kafka: configs not named go back to
  their defaults. A null value is the same as leaving the config out.
- Brokers (this node's id, or "" for the cluster-wide default): the dynamic broker configs
  Kafka allows (dynamic_configs.py), replaced as a whole per level, as in Kafka; a name trafka
  does not know (a plugin's setting) is stored as Kafka stores it.
- Changes apply to the partition logs at once (roll, retention and compaction read them).
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import Op
from trafka.broker.requests.config_changes import alter_resource, config_authorization_error, response


@routes.handles(33, min_version=0, max_version=2)
async def handle(ctx, request):
    results = []
    for resource in request.resources:
        wanted = {c.name: c.value for c in resource.configs if c.value is not None}
        refused = config_authorization_error(ctx, resource, Op.ALTER_CONFIGS)
        results.append(response(resource, refused) if refused else
                       alter_resource(ctx.broker, resource, request.validate_only, lambda _current, w=wanted: w))
    return {"throttle_time_ms": 0, "responses": results}
