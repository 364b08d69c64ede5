"""DescribeCluster (key 60), versions 0-2.

Behavior:
- As a one-node KRaft cluster answers on its broker listener: the cluster id, this node as the
  only broker (the address of the listener the client came in on, never fenced) and, as Kafka's
  brokers do, a random live broker as controller id: this node. In a simulated cluster
  (`cluster.brokers`) every live broker, with its `broker.rack`; the lowest as controller id.
- endpoint_type 2 (controllers, KIP-919) is MISMATCHED_ENDPOINT_TYPE here, as a Kafka broker
  listener answers it; any other type is UNSUPPORTED_ENDPOINT_TYPE.
- include_cluster_authorized_operations: the cluster operations the caller's ACLs allow (every
  one without an authorizer, as Kafka answers).
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.cluster.describe import cluster_authorized_operations, controller_id, live_brokers
from trafka.wire.errors import ErrorCode

BROKERS, CONTROLLERS = 1, 2


def _refuse(endpoint_type: int, error: ErrorCode, message: str, cluster_id: str) -> dict:
    return {"throttle_time_ms": 0, "error_code": error, "error_message": message, "endpoint_type": endpoint_type,
            "cluster_id": cluster_id, "controller_id": -1, "brokers": []}


@routes.handles(60, min_version=0, max_version=2)
async def handle(ctx, request):
    broker = ctx.broker
    endpoint_type = request.endpoint_type
    if endpoint_type == CONTROLLERS:
        return _refuse(endpoint_type, ErrorCode.MISMATCHED_ENDPOINT_TYPE,
                       "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER",
                       broker.cluster_id)
    if endpoint_type != BROKERS:
        return _refuse(endpoint_type, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, f"unknown endpoint type {endpoint_type}",
                       broker.cluster_id)
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "endpoint_type": BROKERS,
        "cluster_id": broker.cluster_id,
        "controller_id": controller_id(broker),
        "brokers": [{"broker_id": b["node_id"], "host": b["host"], "port": b["port"], "rack": b["rack"], "is_fenced": False}
                    for b in live_brokers(ctx)],
        "cluster_authorized_operations": cluster_authorized_operations(ctx, request.include_cluster_authorized_operations),
    }
