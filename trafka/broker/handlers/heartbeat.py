"""Heartbeat (key 12), versions 0-4.

Behavior:
- As in Kafka: REBALANCE_IN_PROGRESS tells a member to rejoin, ILLEGAL_GENERATION that it
  missed a generation, UNKNOWN_MEMBER_ID that its session expired, FENCED_INSTANCE_ID that
  another process took its group instance id.
- The generation is checked before the group's state, as in Kafka 4: a heartbeat of another
  generation is ILLEGAL_GENERATION even while the group prepares a rebalance.
- A heartbeat of the current generation restarts the member's session (not one refused);
  sessions are checked by the coordinator's timer task against the broker clock.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import GROUP, Op, authorize, denied
from trafka.wire.errors import ErrorCode


@routes.handles(12, min_version=0, max_version=4)
async def handle(ctx, request):
    if not authorize(ctx, Op.READ, GROUP, request.group_id):
        return denied(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    error = ctx.broker.group_coordinator.heartbeat(
        request.group_id, request.generation_id, request.member_id, request.group_instance_id
    )
    return {"throttle_time_ms": 0, "error_code": error}
