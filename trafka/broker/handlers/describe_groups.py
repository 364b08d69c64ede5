"""DescribeGroups (key 15), versions 0-6.

Behavior:
- As in Kafka: a Stable group reports its protocol and each member's metadata and
  assignment; a group in any other state reports no protocol and members without them.
- Only classic groups are described here, as in Kafka: a group of the consumer protocol
  (KIP-848) is described by ConsumerGroupDescribe. Such a group, and an unknown one, is
  reported in state Dead with no error up to v5; v6 adds GROUP_ID_NOT_FOUND and Kafka's
  message ("Group g not found.", "Group g is not a classic group.") (KIP-1043).
- Authorized operations (v3+, when asked) are given for every group answered without an error,
  as Kafka's KafkaApis does: an unknown group too below v6 (Dead, no error); from v6 it is
  GROUP_ID_NOT_FOUND and they stay INT32_MIN ("not computed").
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import GROUP, Op, authorize, authorized_operations
from trafka.broker.coordinators.group.group import GroupState
from trafka.wire.errors import ErrorCode

NO_PROTOCOL = ""
DEAD = GroupState.DEAD.value


def _member(member, protocol: str | None) -> dict:
    return {
        "member_id": member.member_id,
        "group_instance_id": member.group_instance_id,
        "client_id": member.client_id,
        "client_host": member.client_host,
        "member_metadata": (member.metadata(protocol) or b"") if protocol else b"",
        "member_assignment": member.assignment if protocol else b"",
    }


def _not_found(group_id: str, version: int, message: str) -> dict:
    if version < 6:
        return {"error_code": ErrorCode.NONE, "group_id": group_id, "group_state": DEAD, "members": []}
    return {
        "error_code": ErrorCode.GROUP_ID_NOT_FOUND, "error_message": message,
        "group_id": group_id, "group_state": DEAD, "members": [],
    }


def _describe(coordinator, group_id: str, version: int) -> dict:
    group = coordinator.group(group_id)
    if not group_id:
        return {"error_code": ErrorCode.INVALID_GROUP_ID, "group_id": group_id, "group_state": DEAD}
    if group is not None and group.group_type != "classic":
        return _not_found(group_id, version, f"Group {group_id} is not a classic group.")
    if group is None:
        return _not_found(group_id, version, f"Group {group_id} not found.")
    protocol = group.protocol_name if group.is_(GroupState.STABLE) else None
    return {
        "error_code": ErrorCode.NONE,
        "group_id": group_id,
        "group_state": group.state.value,
        "protocol_type": group.protocol_type or "",
        "protocol_data": protocol or NO_PROTOCOL,
        "members": [_member(m, protocol) for m in group.members.values()],
    }


@routes.handles(15, min_version=0, max_version=6)
async def handle(ctx, request):
    coordinator = ctx.broker.group_coordinator
    groups = []
    for group_id in request.groups:
        if not authorize(ctx, Op.DESCRIBE, GROUP, group_id):
            groups.append({"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "group_id": group_id, "group_state": ""})
            continue
        described = _describe(coordinator, group_id, ctx.version)
        # as Kafka's KafkaApis: every group answered without an error, a Dead one below v6 too
        if request.include_authorized_operations and described["error_code"] == ErrorCode.NONE:
            described["authorized_operations"] = authorized_operations(ctx, GROUP, group_id)
        groups.append(described)
    return {"throttle_time_ms": 0, "groups": groups}
