"""LeaveGroup (key 13), versions 0-5.

Behavior:
- v0-2: one member; its error is the response's error.
- v3+: a batch of members, each by member id or by group instance id (static members,
  as the admin client's "remove members" sends them); one error per member.
- A member leaving a Stable or CompletingRebalance group starts a rebalance at once.
- The v5 reason is accepted and ignored.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import GROUP, Op, authorize
from trafka.wire.errors import ErrorCode

FIRST_BATCH_VERSION = 3


@routes.handles(13, min_version=0, max_version=5)
async def handle(ctx, request):
    if not authorize(ctx, Op.READ, GROUP, request.group_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "members": []}
    coordinator = ctx.broker.group_coordinator
    if ctx.version < FIRST_BATCH_VERSION:
        error, (member_error,) = coordinator.leave_group(request.group_id, [(request.member_id, None)])
        return {"throttle_time_ms": 0, "error_code": error if error != ErrorCode.NONE else member_error}
    leaving = [(m.member_id, m.group_instance_id) for m in request.members]
    error, errors = coordinator.leave_group(request.group_id, leaving)
    return {
        "throttle_time_ms": 0,
        "error_code": error,
        "members": [
            {"member_id": member_id, "group_instance_id": instance_id, "error_code": member_error}
            for (member_id, instance_id), member_error in zip(leaving, errors)
        ],
    }
