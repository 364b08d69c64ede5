"""OffsetCommit (key 8), versions 2-9.

Behavior:
- A committed offset is the next offset to read. Each commit is a record in
  `__consumer_offsets`, written before the response, so it survives a restart.
- Members commit with their generation and member id (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
  FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS during CompletingRebalance, as in Kafka).
  Generation -1 with no member id is a consumer outside group management (manual
  assignment): accepted while the group has no members, creating the group if needed.
- v9: a commit with a generation to a group that does not exist is GROUP_ID_NOT_FOUND (v2-8:
  ILLEGAL_GENERATION), as in Kafka.
- Unknown topics or partitions: UNKNOWN_TOPIC_OR_PARTITION; metadata over 4096 bytes
  (Kafka's offset.metadata.max.bytes): OFFSET_METADATA_TOO_LARGE.
- retention_time_ms (v2-4) is ignored: offsets are kept until deleted (see docs/groups.md).
"""

from __future__ import annotations

from trafka.broker import registry
from trafka.broker.security.authorizer import GROUP, TOPIC, Op, authorize, denied
from trafka.wire.errors import ErrorCode
from trafka.broker.coordinator.offsets import OffsetCommit


@registry.handles(8, min_version=2, max_version=9)
async def handle(ctx, request):
    if not authorize(ctx, Op.READ, GROUP, request.group_id):
        return denied(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    readable = {t.name for t in request.topics if authorize(ctx, Op.READ, TOPIC, t.name)}
    commits = [
        OffsetCommit(t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch, p.committed_metadata)
        for t in request.topics if t.name in readable
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
    errors = (next(committed) if t.name in readable else ErrorCode.TOPIC_AUTHORIZATION_FAILED
              for t in request.topics for p in t.partitions)
    return {
        "throttle_time_ms": 0,
        "topics": [
            {
                "name": t.name,
                "partitions": [{"partition_index": p.partition_index, "error_code": next(errors)} for p in t.partitions],
            }
            for t in request.topics
        ],
    }
