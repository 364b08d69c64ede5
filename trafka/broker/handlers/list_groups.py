"""ListGroups (key 16), versions 0-5.

Behavior:
- Every group this broker knows: groups with members, empty groups that keep committed
  offsets, and groups that only ever committed offsets (manual assignment; protocol type "").
- v4 filters by state names, case-insensitively as Kafka does: a classic group's (Empty,
  PreparingRebalance, CompletingRebalance, Stable, Dead) or a consumer group's (Empty,
  Assigning, Reconciling, Stable). An empty filter lists all; an unknown name matches nothing.
- v5 filters by group type ("classic", "consumer"; case-insensitive, an unknown type matches
  nothing) and answers each group's type. A consumer-protocol group's protocol type is
  "consumer", as in Kafka.
"""

from __future__ import annotations


from trafka.broker.requests import routes
from trafka.broker.security.authorizer import CLUSTER, GROUP, Op, authorize
from trafka.wire.errors import ErrorCode


def _listed(group) -> dict:
    return {
        "group_id": group.group_id,
        "protocol_type": group.protocol_type or "",
        "group_state": group.state.value,
        "group_type": group.group_type,
    }


@routes.handles(16, min_version=0, max_version=5)
async def handle(ctx, request):
    states = {name.strip().lower() for name in request.states_filter}
    types = {name.lower() for name in request.types_filter}
    coordinator = ctx.broker.group_coordinator
    everything = authorize(ctx, Op.DESCRIBE, CLUSTER, log_denied=False)  # else the groups it may describe
    groups = [
        _listed(group)
        for group in coordinator.all_groups().values()
        if (not states or group.state.value.lower() in states) and (not types or group.group_type in types)
        and (everything or authorize(ctx, Op.DESCRIBE, GROUP, group.group_id, log_denied=False))
    ]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "groups": sorted(groups, key=lambda g: g["group_id"])}
