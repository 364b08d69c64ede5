"""DescribeShareGroupOffsets (key 90), versions 0-1: each share-partition's start offset (the
first offset the group is not done with) and, from v1 (KIP-1226), its lag: the records up to
the high watermark the group is not done with (-1 where the group has no state), as kafka-share-groups.sh --describe and
Admin.listShareGroupOffsets show it.

Behavior: topics null means every partition the group has state for; a partition the group
never fetched has start offset -1. DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED for the
group) and on each topic (TOPIC_AUTHORIZATION_FAILED for its partitions). A group id that is no
share group: GROUP_ID_NOT_FOUND. An unknown topic's partitions: UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import GROUP, TOPIC, Op, authorize
from trafka.broker.coordinators.share.formats import SharePartitionKey
from trafka.storage.errors import StorageError
from trafka.wire.errors import ErrorCode
from trafka.wire.types import ZERO_UUID


def _group(ctx, wanted) -> dict:
    broker = ctx.broker
    group_id = wanted.group_id
    answer = {"group_id": group_id, "topics": [], "error_code": ErrorCode.NONE}
    if not authorize(ctx, Op.DESCRIBE, GROUP, group_id):
        return {**answer, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED}
    group = broker.group_coordinator.group(group_id)
    if group is not None and group.group_type != "share":
        return {**answer, "error_code": ErrorCode.GROUP_ID_NOT_FOUND, "error_message": f"Group {group_id} is not a share group."}
    states = broker.share_coordinator.group_partitions(group_id)
    if wanted.topics is None:
        by_name: dict[str, list[int]] = {}
        for key in states:
            name = broker.group_coordinator.topic_name(key.topic_id)
            if name is not None:
                by_name.setdefault(name, []).append(key.partition)
        topics = sorted((name, sorted(ps)) for name, ps in by_name.items())
    else:
        topics = [(t.topic_name, list(t.partitions)) for t in wanted.topics]
    for name, partitions in topics:
        try:
            topic = broker.logs.topic(name)
            topic_id = topic.topic_id
            error = ErrorCode.NONE if authorize(ctx, Op.DESCRIBE, TOPIC, name) else ErrorCode.TOPIC_AUTHORIZATION_FAILED
        except StorageError:
            topic_id, error = ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        rows = []
        for index in partitions:
            state = states.get(SharePartitionKey(group_id, topic_id, index)) if not error else None
            lag = -1
            if state is not None:
                try:
                    lag = state.lag(broker.logs.log(name, index).high_watermark)
                except StorageError:
                    pass
            rows.append({"partition_index": index, "start_offset": state.start_offset if state else -1,
                         "leader_epoch": 0 if state else -1, "lag": lag, "error_code": error})
        answer["topics"].append({"topic_name": name, "topic_id": topic_id, "partitions": rows})
    return answer


@routes.handles(90, min_version=0, max_version=1)
async def handle(ctx, request):
    return {"throttle_time_ms": 0, "groups": [_group(ctx, g) for g in request.groups]}
