"""ConsumerGroupDescribe (key 69), versions 0-1: KIP-848 consumer groups as Kafka describes them.

Behavior:
- As Kafka's ConsumerGroup.asDescribedGroup: the group's state (Empty, Assigning, Reconciling,
  Stable), group epoch, target assignment epoch and assignor (the one most members ask for,
  else the first of group.consumer.assignors); each member with its epoch, client, subscription
  and both its current and its target assignment (topic id, name and partitions; a topic
  deleted since is left out, as Kafka does). v1: member type 1 (consumer protocol): trafka's
  consumer groups have no classic-protocol members.
- An unknown group, or a classic one (described by DescribeGroups), is GROUP_ID_NOT_FOUND with
  Kafka's message; an empty group id is INVALID_GROUP_ID; a group the principal may not
  DESCRIBE (ACLs) is GROUP_AUTHORIZATION_FAILED.
- include_authorized_operations: the principal's operations on the group (READ, DESCRIBE,
  DELETE; all of them without an authorizer), else "not requested".
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import AclOperation, ResourceType, authorize, authorized_operations
from trafka.wire.errors import ErrorCode
from trafka.wire.messages.consumer_group_describe import NO_AUTHORIZED_OPERATIONS

CLASSIC_MEMBER_TYPE, CONSUMER_MEMBER_TYPE = 0, 1  # Kafka's MemberType (v1+): a hosted classic member is 0


def _assignment(assignment, topic_names) -> dict:
    return {"topic_partitions": [
        {"topic_id": topic_id, "topic_name": topic_names[topic_id], "partitions": sorted(partitions)}
        for topic_id, partitions in sorted(assignment.items(), key=lambda item: topic_names.get(item[0], ""))
        if topic_id in topic_names
    ]}


def _member(member, target, topic_names) -> dict:
    return {
        "member_id": member.member_id,
        "instance_id": member.instance_id,
        "rack_id": member.rack_id,
        "member_epoch": member.member_epoch,
        "client_id": member.client_id,
        "client_host": member.client_host,
        "subscribed_topic_names": list(member.subscribed_topic_names),
        "subscribed_topic_regex": member.subscribed_topic_regex,
        "assignment": _assignment(member.assigned, topic_names),
        "target_assignment": _assignment(target, topic_names),
        "member_type": CLASSIC_MEMBER_TYPE if member.uses_classic_protocol else CONSUMER_MEMBER_TYPE,
    }


def _error(group_id: str, error: ErrorCode, message: str | None = None) -> dict:
    return {"error_code": error, "error_message": message, "group_id": group_id}


def _describe(ctx, group_id: str, include_operations: bool, topic_names) -> dict:
    coordinator = ctx.broker.group_coordinator
    if not group_id:
        return _error(group_id, ErrorCode.INVALID_GROUP_ID)
    if not authorize(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
        return _error(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    group = coordinator.group(group_id)
    if group is None:
        return _error(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
    if group.group_type != "consumer":
        return _error(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
    return {
        "error_code": ErrorCode.NONE,
        "group_id": group_id,
        "group_state": group.state.value,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "assignor_name": coordinator.preferred_assignor(group),
        "members": [_member(m, group.target.get(m.member_id, {}), topic_names) for m in group.members.values()],
        "authorized_operations": (
            authorized_operations(ctx, ResourceType.GROUP, group_id) if include_operations else NO_AUTHORIZED_OPERATIONS
        ),
    }


@routes.handles(69, min_version=0, max_version=1)
async def handle(ctx, request):
    topic_names = {metadata.topic_id: name for name, metadata in ctx.broker.logs.topics.items()}
    return {
        "throttle_time_ms": 0,
        "groups": [_describe(ctx, g, request.include_authorized_operations, topic_names) for g in request.group_ids],
    }
