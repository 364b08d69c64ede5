"""FindCoordinator (key 10), versions 0-6.

Behavior:
- This broker coordinates every group (key type 0) and every transactional id (key type 1):
  the answer is always itself (advertised host/port). In a simulated cluster the coordinator is
  the leader of the key's `__consumer_offsets` / `__transaction_state` partition
  (COORDINATOR_NOT_AVAILABLE while it has none). Other key types, share groups' type 2
  (v6, KIP-932) among them, are INVALID_REQUEST: trafka serves no share groups.
- v4 batches keys and answers one coordinator per key; v0-3 carry one key. v5 and v6 only
  add error codes and the share key type.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.cluster.describe import node_address
from trafka.broker.security.authorizer import GROUP, TRANSACTIONAL_ID, Op, authorize
from trafka.wire.errors import ErrorCode

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1


def _coordinator_node(broker, key: str, key_type: int) -> int:
    """The broker leading the key's internal-topic partition: a coordinator lives on that
    partition's leader."""
    topic = broker.group_coordinator.offsets_topic if key_type == GROUP_KEY_TYPE else broker.txn_coordinator.state_topic
    return broker.cluster.leader_id(topic.name, topic.partition_for(key))


def _coordinator(ctx, key: str, key_type: int) -> dict:
    resource = {GROUP_KEY_TYPE: GROUP, TRANSACTION_KEY_TYPE: TRANSACTIONAL_ID}.get(key_type)
    if resource is not None and not authorize(ctx, Op.DESCRIBE, resource, key):
        error = ErrorCode.GROUP_AUTHORIZATION_FAILED if resource == GROUP else ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        return {"key": key, "node_id": -1, "host": "", "port": -1, "error_code": error, "error_message": None}
    if key_type in (GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE):
        node_id = _coordinator_node(ctx.broker, key, key_type)
        address = node_address(ctx, node_id)  # at the listener the client came in on
        if address is None:  # its partition has no leader now
            return {"key": key, "node_id": -1, "host": "", "port": -1,
                    "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE, "error_message": None}
        host, port = address
        return {
            "key": key,
            "node_id": node_id,
            "host": host,
            "port": port,
            "error_code": ErrorCode.NONE,
            "error_message": None,
        }
    error, message = ErrorCode.INVALID_REQUEST, f"unknown coordinator key type {key_type}"
    return {"key": key, "node_id": -1, "host": "", "port": -1, "error_code": error, "error_message": message}


@routes.handles(10, min_version=0, max_version=6)
async def handle(ctx, request):
    key_type = request.key_type
    if ctx.version >= 4:
        return {
            "throttle_time_ms": 0,
            "coordinators": [_coordinator(ctx, key, key_type) for key in request.coordinator_keys],
        }
    found = _coordinator(ctx, request.key, key_type)
    del found["key"]
    return {"throttle_time_ms": 0, **found}
