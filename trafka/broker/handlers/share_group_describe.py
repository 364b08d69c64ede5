"""ShareGroupDescribe (key 77), version 1: share groups, their epochs and members with their
subscriptions and assignments (topic ids and names). A group id that is not a share group is
GROUP_ID_NOT_FOUND with a message, as in Kafka; DESCRIBE on the group is checked."""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import GROUP, Op, authorize
from trafka.wire.errors import ErrorCode


def _error(group_id: str, error: ErrorCode, message: str | None = None) -> dict:
    return {"error_code": error, "error_message": message, "group_id": group_id, "group_state": "Dead",
            "group_epoch": -1, "assignment_epoch": -1, "assignor_name": "", "members": []}


def _describe(ctx, group_id: str) -> dict:
    coordinator = ctx.broker.group_coordinator
    if not group_id:
        return _error(group_id, ErrorCode.INVALID_GROUP_ID)
    if not authorize(ctx, Op.DESCRIBE, GROUP, group_id):
        return _error(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    group = coordinator.group(group_id)
    if group is None:
        return _error(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
    if group.group_type != "share":
        return _error(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
    members = []
    for member in group.members.values():
        members.append({
            "member_id": member.member_id, "rack_id": member.rack_id, "member_epoch": member.member_epoch,
            "client_id": member.client_id, "client_host": member.client_host,
            "subscribed_topic_names": list(member.subscribed_topic_names),
            "assignment": {"topic_partitions": [
                {"topic_id": topic_id, "topic_name": coordinator.topic_name(topic_id) or "", "partitions": sorted(ps)}
                for topic_id, ps in sorted(member.assignment.items())
            ]},
        })
    return {"error_code": ErrorCode.NONE, "group_id": group_id, "group_state": group.state.value,
            "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch, "assignor_name": "simple",
            "members": members}


@routes.handles(77, min_version=1, max_version=1)
async def handle(ctx, request):
    return {"throttle_time_ms": 0, "groups": [_describe(ctx, group_id) for group_id in request.group_ids]}
