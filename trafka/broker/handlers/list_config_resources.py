"""ListConfigResources (key 74), versions 0-1.

Behavior:
- v1 (KIP-1142) lists the resources of the asked types (none asked: every supported type) in
  Kafka's order: groups with configs, client-metrics subscriptions, this node as a broker
  logger, this node as a broker, then every topic (internal ones included), names sorted
  within a type: the groups with configs set, the client-metrics subscriptions. A type outside TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS and
  GROUP fails the whole request with UNSUPPORTED_VERSION, as in Kafka.
- v0 is the older ListClientMetricsResources: client-metrics subscriptions only.
- Needs DESCRIBE_CONFIGS on the cluster (else CLUSTER_AUTHORIZATION_FAILED), as in Kafka.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import CLUSTER, Op, authorize
from trafka.wire.errors import ErrorCode

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
SUPPORTED = (GROUP, CLIENT_METRICS, BROKER_LOGGER, BROKER, TOPIC)  # Kafka's listing order


def _names(broker, resource_type: int) -> list[str]:
    if resource_type in (BROKER, BROKER_LOGGER):
        return [str(broker.node_id)]
    if resource_type == TOPIC:
        return sorted(broker.logs.topics)
    if resource_type == GROUP:
        return broker.group_configs.configured()
    return broker.client_metrics.names()  # CLIENT_METRICS


@routes.handles(74, min_version=0, max_version=1)
async def handle(ctx, request):
    if not authorize(ctx, Op.DESCRIBE_CONFIGS, CLUSTER):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "config_resources": []}
    if ctx.version == 0:
        wanted = {CLIENT_METRICS}
    else:
        wanted = set(request.resource_types) or set(SUPPORTED)
    if not wanted <= set(SUPPORTED):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.UNSUPPORTED_VERSION, "config_resources": []}
    resources = [
        {"resource_name": name, "resource_type": kind}
        for kind in SUPPORTED if kind in wanted
        for name in _names(ctx.broker, kind)
    ]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "config_resources": resources}
