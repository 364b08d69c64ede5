"""ListPartitionReassignments (key 46), version 0.

Behavior:
- One node: a reassignment it accepts (to this node, AlterPartitionReassignments) is complete
  at once, so none is ever in progress and the answer lists no partitions, as Kafka's
  controller answers when nothing is moving.
"""

from __future__ import annotations

from trafka.broker import registry
from trafka.broker.security.authorizer import CLUSTER, Op, authorize, denied
from trafka.wire.errors import ErrorCode


@registry.handles(46, min_version=0, max_version=0)
async def handle(ctx, request):
    if not authorize(ctx, Op.DESCRIBE, CLUSTER):
        return denied(ctx, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "topics": []}
