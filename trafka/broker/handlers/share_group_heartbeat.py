"""ShareGroupHeartbeat (key 76), version 1: a share group member joins, heartbeats, leaves.

Behavior (trafka/broker/coordinators/share/group.py): epoch 0 joins with the member id the client chose,
-1 leaves (the records it holds stay its own until its share session ends: the final
ShareAcknowledge that close() sends next, or its connection), a member silent for
group.share.session.timeout.ms is removed and its records released. Every change is written to
`__consumer_offsets` (Kafka's share group records) before it is answered, so the group and its
members survive a restart; a failed write answers the error and changes nothing. Every member is assigned every partition of its
subscribed topics (partitions are shared; records are handed out by acquisition). Errors:
INVALID_REQUEST with a message, UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, GROUP_ID_NOT_FOUND for
an id used by a classic or consumer group, GROUP_AUTHORIZATION_FAILED (READ on the group),
TOPIC_AUTHORIZATION_FAILED (DESCRIBE on a subscribed topic).
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.handlers.join_group import client_host
from trafka.broker.security.authorizer import GROUP, TOPIC, Op, authorize, denied
from trafka.broker.coordinators.share.group import ShareHeartbeat
from trafka.wire.errors import ErrorCode


@routes.handles(76, min_version=1, max_version=1)
async def handle(ctx, request):
    if not authorize(ctx, Op.READ, GROUP, request.group_id):
        return denied(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if any(not authorize(ctx, Op.DESCRIBE, TOPIC, name) for name in request.subscribed_topic_names or ()):
        return denied(ctx, request, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    result = ctx.broker.group_coordinator.share_group_heartbeat(ShareHeartbeat(
        group_id=request.group_id, member_id=request.member_id, member_epoch=request.member_epoch,
        rack_id=request.rack_id, subscribed_topic_names=request.subscribed_topic_names,
        client_id=ctx.client_id or "", client_host=client_host(ctx),
    ))
    assignment = None
    if result.assignment is not None:
        assignment = {"topic_partitions": [
            {"topic_id": topic_id, "partitions": sorted(partitions)} for topic_id, partitions in sorted(result.assignment.items())
        ]}
    return {
        "throttle_time_ms": 0,
        "error_code": result.error,
        "error_message": result.message,
        "member_id": result.member_id,
        "member_epoch": result.member_epoch,
        "heartbeat_interval_ms": result.heartbeat_interval_ms,
        "assignment": assignment,
    }
