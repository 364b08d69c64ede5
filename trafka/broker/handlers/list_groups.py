"""ListGroups (key 16), versions 0-4.

Behavior:
- Every group this broker knows: groups with members, empty groups that keep committed
  offsets, and groups that only ever committed offsets (manual assignment; protocol type "").
- v4 filters by state names (Empty, PreparingRebalance, CompletingRebalance, Stable, Dead),
  case-insensitively as Kafka does; an empty filter lists all. An unknown state name
  matches nothing.
"""

from __future__ import annotations

from trafka.broker import registry
from trafka.broker.coordinator.group import GroupState
from trafka.wire.errors import ErrorCode


@registry.handles(16, min_version=0, max_version=4)
async def handle(ctx, request):
    wanted = {GroupState.parse(name) for name in request.states_filter}
    groups = [
        {"group_id": group.group_id, "protocol_type": group.protocol_type or "", "group_state": group.state.value}
        for group in ctx.broker.group_coordinator.groups.values()
        if not wanted or group.state in wanted
    ]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "groups": sorted(groups, key=lambda g: g["group_id"])}
