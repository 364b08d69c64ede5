"""DescribeGroups (key 15), versions 0-5.

Behavior:
- As in Kafka: a Stable group reports its protocol and each member's metadata and
  assignment; a group in any other state reports no protocol and members without them.
- An unknown group is reported in state Dead with no error (Kafka does the same up to v5).
- Authorized operations are not computed (no ACLs): reported as "not requested".
"""

from __future__ import annotations

from trafka.broker import registry
from trafka.broker.coordinator.group import GroupState
from trafka.wire.errors import ErrorCode

NO_PROTOCOL = ""


def _member(member, protocol: str | None) -> dict:
    return {
        "member_id": member.member_id,
        "group_instance_id": member.group_instance_id,
        "client_id": member.client_id,
        "client_host": member.client_host,
        "member_metadata": (member.metadata(protocol) or b"") if protocol else b"",
        "member_assignment": member.assignment if protocol else b"",
    }


def _describe(coordinator, group_id: str) -> dict:
    group = coordinator.groups.get(group_id)
    if not group_id:
        return {"error_code": ErrorCode.INVALID_GROUP_ID, "group_id": group_id, "group_state": GroupState.DEAD.value}
    if group is None:
        return {"error_code": ErrorCode.NONE, "group_id": group_id, "group_state": GroupState.DEAD.value, "members": []}
    protocol = group.protocol_name if group.is_(GroupState.STABLE) else None
    return {
        "error_code": ErrorCode.NONE,
        "group_id": group_id,
        "group_state": group.state.value,
        "protocol_type": group.protocol_type or "",
        "protocol_data": protocol or NO_PROTOCOL,
        "members": [_member(m, protocol) for m in group.members.values()],
    }


@registry.handles(15, min_version=0, max_version=5)
async def handle(ctx, request):
    coordinator = ctx.broker.group_coordinator
    return {"throttle_time_ms": 0, "groups": [_describe(coordinator, g) for g in request.groups]}
