"""SyncGroup (key 14), versions 0-5.

Behavior:
- The leader's assignment passes through untouched: each member gets the bytes the leader
  gave it, or empty bytes if the leader gave it none.
- A follower's request waits in the handler until the leader's arrives (or the rebalance
  timeout removes the members that never synced and starts a new rebalance).
- The assignment reaching a member restarts its session; a SyncGroup to a Stable group gets
  the member's assignment again and restarts nothing, as in Kafka.
- v5: a protocol type or name other than the group's is INCONSISTENT_GROUP_PROTOCOL.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import GROUP, Op, authorize, denied
from trafka.wire.errors import ErrorCode


@routes.handles(14, min_version=0, max_version=5)
async def handle(ctx, request):
    if not authorize(ctx, Op.READ, GROUP, request.group_id):
        return denied(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    result = await ctx.broker.group_coordinator.sync_group(
        request.group_id,
        request.generation_id,
        request.member_id,
        request.group_instance_id,
        request.protocol_type,
        request.protocol_name,
        {a.member_id: a.assignment for a in request.assignments},
    )
    return {
        "throttle_time_ms": 0,
        "error_code": result.error,
        "protocol_type": result.protocol_type,
        "protocol_name": result.protocol_name,
        "assignment": result.assignment,
    }
