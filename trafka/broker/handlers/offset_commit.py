"""OffsetCommit (key 8), versions 2-10.

Behavior:
- A committed offset is the next offset to read. Each commit is a record in
  `__consumer_offsets`, written before the response, so it survives a restart.
- Members commit with their generation and member id (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
  FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS during CompletingRebalance, as in Kafka).
  Generation -1 with no member id is a consumer outside group management (manual
  assignment): accepted while the group has no members, creating the group if needed.
- v9: a commit with a generation to a group that does not exist is GROUP_ID_NOT_FOUND (v2-8:
  ILLEGAL_GENERATION), as in Kafka.
- v10 names topics by id (KIP-848): an id no topic has is UNKNOWN_TOPIC_ID for its partitions.
- Unknown topics or partitions: UNKNOWN_TOPIC_OR_PARTITION; metadata over 4096 bytes
  (Kafka's offset.metadata.max.bytes): OFFSET_METADATA_TOO_LARGE.
- A classic member's commit that passes the member and generation checks restarts its
  session in a Stable or PreparingRebalance group, whatever becomes of its partitions (as
  Kafka's commitOffset); a KIP-848 member's does not.
- retention_time_ms (v2-4) is ignored: offsets are kept until deleted (see docs/groups.md).
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import GROUP, TOPIC, Op, authorize, denied
from trafka.broker.requests.topics import topic_name
from trafka.wire.errors import ErrorCode
from trafka.broker.coordinators.group.offsets import OffsetCommit


@routes.handles(8, min_version=2, max_version=10)
async def handle(ctx, request):
    if not authorize(ctx, Op.READ, GROUP, request.group_id):
        return denied(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    by_id = ctx.version >= 10
    names = [topic_name(ctx.broker, t.name if not by_id else None, t.topic_id if by_id else None, by_id=by_id)
             for t in request.topics]
    readable = {name for name in names if name is not None and authorize(ctx, Op.READ, TOPIC, name)}
    commits = [
        OffsetCommit(name, p.partition_index, p.committed_offset, p.committed_leader_epoch, p.committed_metadata)
        for t, name in zip(request.topics, names) if name in readable
        for p in t.partitions
    ]
    committed = iter(ctx.broker.group_coordinator.commit_offsets(
        request.group_id,
        request.generation_id_or_member_epoch,
        request.member_id,
        request.group_instance_id,
        commits,
        api_version=ctx.version,
    ))

    def error(name) -> ErrorCode:
        if name is None:
            return ErrorCode.UNKNOWN_TOPIC_ID
        return next(committed) if name in readable else ErrorCode.TOPIC_AUTHORIZATION_FAILED
    return {
        "throttle_time_ms": 0,
        "topics": [
            {
                "name": name if not by_id else "",
                "topic_id": t.topic_id if by_id else None,
                "partitions": [{"partition_index": p.partition_index, "error_code": error(name)} for p in t.partitions],
            }
            for t, name in zip(request.topics, names)
        ],
    }
