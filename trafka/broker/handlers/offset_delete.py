"""OffsetDelete (key 47), version 0.

Behavior:
- Deletes a group's committed offsets by writing tombstones to `__consumer_offsets`.
- As in Kafka: an unknown group is GROUP_ID_NOT_FOUND; a group with members may only lose
  offsets of topics none of its members subscribes to (GROUP_SUBSCRIBED_TO_TOPIC otherwise,
  read from the topics of the consumer protocol's subscriptions, each read as version 0, the
  prefix of every version, as Kafka does); a non-consumer group with members is
  NON_EMPTY_GROUP.
- Deleting a partition that has no committed offset succeeds.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import GROUP, TOPIC, Op, authorize, denied
from trafka.wire.errors import ErrorCode


@routes.handles(47, min_version=0, max_version=0)
async def handle(ctx, request):
    if not authorize(ctx, Op.DELETE, GROUP, request.group_id):
        return denied(ctx, request, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    readable = {t.name for t in request.topics if authorize(ctx, Op.READ, TOPIC, t.name)}
    partitions = [(t.name, p.partition_index) for t in request.topics if t.name in readable for p in t.partitions]
    error, deleted = ctx.broker.group_coordinator.delete_offsets(request.group_id, partitions)
    deleted = iter(deleted)
    errors = (next(deleted) if t.name in readable else ErrorCode.TOPIC_AUTHORIZATION_FAILED
              for t in request.topics for p in t.partitions)
    return {
        "error_code": error,
        "throttle_time_ms": 0,
        "topics": [
            {
                "name": t.name,
                "partitions": [{"partition_index": p.partition_index, "error_code": next(errors)} for p in t.partitions],
            }
            for t in request.topics
        ] if not error else [],
    }
