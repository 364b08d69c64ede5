"""ConsumerGroupHeartbeat (key 68), versions 0-1: the KIP-848 consumer group protocol.

Behavior:
- As in Kafka's GroupMetadataManager (see trafka/broker/coordinators/group/consumer.py): epoch 0
  joins, -1 leaves, -2 leaves a static member temporarily; the broker computes the
  assignment with a server-side assignor (uniform, range) and hands it out in steps, revoking
  before assigning. Errors: INVALID_REQUEST (with a message) for a malformed request,
  UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, FENCED_INSTANCE_ID, UNRELEASED_INSTANCE_ID,
  UNSUPPORTED_ASSIGNOR, GROUP_MAX_SIZE_REACHED, INVALID_REGULAR_EXPRESSION, GROUP_ID_NOT_FOUND.
- Regular expressions are Python's `re`, matched against the whole topic name (Kafka: RE2/J).
  With an authorizer, a regex resolves only to topics this heartbeat's principal may DESCRIBE
  (Kafka 4.0.1+); topic names in the subscription need DESCRIBE (TOPIC_AUTHORIZATION_FAILED).
- Classic members cannot join a consumer group and vice versa (docs/compatibility.md).
- v1 (KIP-1082): the client generates its member id; an empty one is INVALID_REQUEST. v0: the
  broker generates it on join.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.coordinators.group.consumer import HeartbeatRequest, owned_from_request
from trafka.broker.handlers.join_group import client_host
from trafka.broker.security.authorizer import GROUP, TOPIC, Op, authorize, client_host as peer_host, denied, principal_of
from trafka.wire.errors import ErrorCode


def _describe_filter(ctx):
    """The topics this heartbeat's principal may DESCRIBE, asked when the member's regex is
    resolved (Kafka 4.0.1+ resolves a regex only to those); None without an authorizer."""
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return None
    principal, host = principal_of(ctx), peer_host(ctx)
    return lambda name: authorizer.authorize(principal, host, Op.DESCRIBE, TOPIC, name)


@routes.handles(68, min_version=0, max_version=1)
async def handle(ctx, request):
    if not authorize(ctx, Op.READ, GROUP, request.group_id):
        return denied(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if any(not authorize(ctx, Op.DESCRIBE, TOPIC, name) for name in request.subscribed_topic_names or ()):
        return denied(ctx, request, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    result = ctx.broker.group_coordinator.consumer_group_heartbeat(HeartbeatRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        member_epoch=request.member_epoch,
        instance_id=request.instance_id,
        rack_id=request.rack_id,
        rebalance_timeout_ms=request.rebalance_timeout_ms,
        subscribed_topic_names=request.subscribed_topic_names,
        subscribed_topic_regex=request.subscribed_topic_regex,
        server_assignor=request.server_assignor,
        owned=owned_from_request(request.topic_partitions),
        client_id=ctx.client_id or "",
        client_host=client_host(ctx),
        api_version=ctx.version,
        may_describe=_describe_filter(ctx),
    ))
    assignment = None
    if result.assignment is not None:
        assignment = {"topic_partitions": [
            {"topic_id": topic_id, "partitions": sorted(partitions)}
            for topic_id, partitions in sorted(result.assignment.items())
        ]}
    return {
        "throttle_time_ms": 0,
        "error_code": result.error,
        "error_message": result.error_message,
        "member_id": result.member_id,
        "member_epoch": result.member_epoch,
        "heartbeat_interval_ms": result.heartbeat_interval_ms,
        "assignment": assignment,
    }
