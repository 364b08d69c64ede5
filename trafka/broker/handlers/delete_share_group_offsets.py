"""DeleteShareGroupOffsets (key 92), version 0: forget an empty share group's state for whole
topics (KIP-932; Admin.deleteShareGroupOffsets, kafka-share-groups.sh --delete-offsets).

Behavior:
- DELETE on the group (GROUP_AUTHORIZATION_FAILED for the request), READ on each topic
  (TOPIC_AUTHORIZATION_FAILED for it); an unknown topic: UNKNOWN_TOPIC_OR_PARTITION.
- A share group with members: NON_EMPTY_GROUP; a group of another type: GROUP_ID_NOT_FOUND.
- Every share-partition of the topic the group has state for is tombstoned in
  `__share_group_state`; the group's next fetch starts it again by share.auto.offset.reset.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import GROUP, Op, authorize
from trafka.broker.coordinators.share.offsets import group_refusal, topic, topic_id
from trafka.wire.errors import ErrorCode


def _refused(request, error: ErrorCode, message: str | None) -> dict:
    return {"throttle_time_ms": 0, "error_code": error, "error_message": message, "responses": [
        {"topic_name": t.topic_name, "topic_id": topic_id(None), "error_code": error, "error_message": message}
        for t in request.topics]}


@routes.handles(92, min_version=0, max_version=0)
async def handle(ctx, request):
    if not authorize(ctx, Op.DELETE, GROUP, request.group_id):
        return _refused(request, ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    share = ctx.broker.share_coordinator
    error, message = group_refusal(ctx.broker, request.group_id)
    if error:
        return _refused(request, error, message)
    held = share.group_partitions(request.group_id)
    responses = []
    for t in request.topics:
        found, error = topic(ctx, t.topic_name)
        if not error:
            for key in [k for k in held if k.topic_id == found.topic_id]:
                error = share.delete_partition(key)
                if error:
                    break
        responses.append({"topic_name": t.topic_name, "topic_id": topic_id(found), "error_code": error})
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "responses": responses}
