"""AlterShareGroupOffsets (key 91), version 0: set share-partition start offsets of an empty
share group (KIP-932; Admin.alterShareGroupOffsets, kafka-share-groups.sh --reset-offsets).

Behavior:
- READ on the group (GROUP_AUTHORIZATION_FAILED for the request) and on each topic
  (TOPIC_AUTHORIZATION_FAILED for its partitions); a topic or partition that does not exist:
  UNKNOWN_TOPIC_OR_PARTITION.
- A share group with members: NON_EMPTY_GROUP, nothing changes. A group of another type:
  GROUP_ID_NOT_FOUND. An unknown group id is a share group without members, whose offsets
  may be set before its first member comes, as in Kafka.
- Each named share-partition starts afresh at the given offset, nothing in flight: a new
  snapshot is written to `__share_group_state` first, then it counts. The next fetch clamps an
  offset below the log start to it.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import GROUP, Op, authorize
from trafka.broker.coordinators.share.formats import SharePartitionKey
from trafka.broker.coordinators.share.offsets import group_refusal, topic, topic_id
from trafka.wire.errors import ErrorCode


def _refused(request, error: ErrorCode, message: str | None) -> dict:
    return {"throttle_time_ms": 0, "error_code": error, "error_message": message, "responses": [
        {"topic_name": t.topic_name, "topic_id": topic_id(None), "partitions": [
            {"partition_index": p.partition_index, "error_code": error, "error_message": message} for p in t.partitions]}
        for t in request.topics]}


@routes.handles(91, min_version=0, max_version=0)
async def handle(ctx, request):
    if not authorize(ctx, Op.READ, GROUP, request.group_id):
        return _refused(request, ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    share = ctx.broker.share_coordinator
    error, message = group_refusal(ctx.broker, request.group_id)
    if error:
        return _refused(request, error, message)
    responses = []
    for t in request.topics:
        found, error = topic(ctx, t.topic_name)
        rows = []
        for p in t.partitions:
            outcome = error
            if not outcome and not 0 <= p.partition_index < found.partitions:
                outcome = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            if not outcome and p.start_offset < 0:
                outcome = ErrorCode.INVALID_REQUEST
            if not outcome:
                key = SharePartitionKey(request.group_id, found.topic_id, p.partition_index)
                outcome = share.reset_partition(key, p.start_offset)
            rows.append({"partition_index": p.partition_index, "error_code": outcome})
        responses.append({"topic_name": t.topic_name, "topic_id": topic_id(found), "partitions": rows})
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "responses": responses}
