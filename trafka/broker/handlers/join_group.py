"""JoinGroup (key 11), versions 0-9.

Behavior:
- The classic group protocol as in Kafka's GroupCoordinator (see trafka/broker/coordinators/group):
  the request waits in the handler until the rebalance completes (all known members rejoined,
  or the largest rebalance timeout passed), then every member gets the generation and the
  leader also gets the members' metadata.
- v4+: a first join without a member id and without a group instance id is answered
  MEMBER_ID_REQUIRED with the id to rejoin with.
- The first rebalance of an empty group waits group.initial.rebalance.delay.ms (default 0
  here, 3000 in Kafka) for more members.
- session_timeout_ms outside group.min/max.session.timeout.ms: INVALID_SESSION_TIMEOUT.
- v0 has no rebalance timeout: the session timeout serves as both, as in Kafka.
- v8's join reason (KIP-800) goes to the log line of the rebalance it causes.
- v9's skip_assignment is set, as in Kafka, when a static leader rejoins a Stable group with
  the same protocols: it gets the members' metadata but the current assignment stands, so it
  must not compute a new one. Older versions get the same answer without the flag.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import GROUP, Op, authorize
from trafka.wire.errors import ErrorCode
from trafka.broker.coordinators.group.classic import JoinRequest

FIRST_VERSION_REQUIRING_MEMBER_ID = 4


def client_host(ctx) -> str:
    """The member's address as Kafka reports it in DescribeGroups ("/127.0.0.1")."""
    return "/" + ctx.peer.rsplit(":", 1)[0]


@routes.handles(11, min_version=0, max_version=9)
async def handle(ctx, request):
    if not authorize(ctx, Op.READ, GROUP, request.group_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "generation_id": -1,
                "protocol_type": None, "protocol_name": None if ctx.version >= 7 else "", "leader": "",
                "member_id": request.member_id, "members": []}
    rebalance_timeout = request.rebalance_timeout_ms
    result = await ctx.broker.group_coordinator.join_group(JoinRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        group_instance_id=request.group_instance_id,
        client_id=ctx.client_id or "",
        client_host=client_host(ctx),
        session_timeout_ms=request.session_timeout_ms,
        rebalance_timeout_ms=request.session_timeout_ms if rebalance_timeout < 0 else rebalance_timeout,
        protocol_type=request.protocol_type,
        protocols=[(p.name, p.metadata) for p in request.protocols],
        require_known_member_id=ctx.version >= FIRST_VERSION_REQUIRING_MEMBER_ID,
        reason=request.reason,
    ))
    return {
        "throttle_time_ms": 0,
        "error_code": result.error,
        "generation_id": result.generation,
        "protocol_type": result.protocol_type,
        # Before v7 the protocol name is not nullable: Kafka sends "" when there is none.
        "protocol_name": result.protocol_name if result.protocol_name is not None or ctx.version >= 7 else "",
        "leader": result.leader,
        "skip_assignment": result.skip_assignment,
        "member_id": result.member_id,
        "members": [
            {"member_id": member_id, "group_instance_id": instance_id, "metadata": metadata}
            for member_id, instance_id, metadata in result.members
        ],
    }
