"""OffsetFetch (key 9), versions 1-10.

Behavior:
- A partition without a committed offset (or of an unknown topic or group) answers offset -1,
  empty metadata and no error, as in Kafka; the consumer then applies auto.offset.reset.
- A null topic list (v2+) fetches every offset the group committed.
- v8 fetches several groups in one request and answers per group.
- v9 carries each group's member id and member epoch: a member of a consumer-protocol group
  (KIP-848) that is unknown gets UNKNOWN_MEMBER_ID, one with another epoch STALE_MEMBER_EPOCH,
  as the group's error with no topics. Classic groups, and fetches without a member id and
  epoch (admin clients), are not checked, as in Kafka.
- v10 names topics by id (KIP-848), asked and answered: an id no topic has is
  UNKNOWN_TOPIC_ID for its partitions; an all-topics answer leaves out offsets of topics that no
  longer exist (they have no id to name them by).
- require_stable (v7+): a partition with offsets of an open transaction pending (TxnOffsetCommit)
  answers UNSTABLE_OFFSET_COMMIT, and the consumer retries; without it, the last committed
  offset comes back, as in Kafka.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from dataclasses import dataclass

from trafka.broker.security.authorizer import GROUP, TOPIC, Op, authorize
from trafka.broker.requests.topics import topic_name
from trafka.wire.errors import ErrorCode

NO_OFFSET = -1
NO_LEADER_EPOCH = -1


def _partition(index: int, committed) -> dict:
    if committed is None:
        return {
            "partition_index": index,
            "committed_offset": NO_OFFSET,
            "committed_leader_epoch": NO_LEADER_EPOCH,
            "metadata": "",
            "error_code": ErrorCode.NONE,
        }
    return {
        "partition_index": index,
        "committed_offset": committed.offset,
        "committed_leader_epoch": committed.leader_epoch,
        "metadata": committed.metadata,
        "error_code": ErrorCode.NONE,
    }


def _unstable(index: int) -> dict:
    return {**_partition(index, None), "error_code": ErrorCode.UNSTABLE_OFFSET_COMMIT}


def _topics(coordinator, group_id: str, topics, require_stable: bool) -> list[dict]:
    wanted = None if topics is None else [(t.name, list(t.partition_indexes)) for t in topics]
    return [
        {
            "name": name,
            "partitions": [
                _unstable(index) if require_stable and coordinator.has_pending_txn_offset(group_id, name, index)
                else _partition(index, committed)
                for index, committed in partitions
            ],
        }
        for name, partitions in coordinator.fetch_offsets(group_id, wanted)
    ]


def _group(ctx, group_id: str, topics, require_stable: bool) -> tuple[ErrorCode, list[dict]]:
    """GROUP DESCRIBE, then TOPIC DESCRIBE per topic: named topics the principal may not describe
    are TOPIC_AUTHORIZATION_FAILED, and left out of an all-topics answer (as Kafka does)."""
    if not authorize(ctx, Op.DESCRIBE, GROUP, group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, []
    coordinator = ctx.broker.group_coordinator
    if topics is None:
        every = _topics(coordinator, group_id, None, require_stable)
        return ErrorCode.NONE, [t for t in every if authorize(ctx, Op.DESCRIBE, TOPIC, t["name"], log_denied=False)]
    allowed = [t for t in topics if authorize(ctx, Op.DESCRIBE, TOPIC, t.name)]
    refused = [{"name": t.name, "partitions": [{**_partition(index, None), "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
                                              for index in t.partition_indexes]}
               for t in topics if t not in allowed]
    return ErrorCode.NONE, _topics(coordinator, group_id, allowed, require_stable) + refused


@dataclass
class _Named:
    """A v10 topic (named by id) as the name-based steps take it."""
    name: str
    partition_indexes: list[int]


def _member_group(ctx, group, require_stable: bool) -> dict:
    error = ctx.broker.group_coordinator.validate_offset_fetch(group.group_id, group.member_id, group.member_epoch)
    if error and authorize(ctx, Op.DESCRIBE, GROUP, group.group_id, log_denied=False):
        return {"group_id": group.group_id, "topics": [], "error_code": error}
    if ctx.version < 10:
        error, topics = _group(ctx, group.group_id, group.topics, require_stable)
        return {"group_id": group.group_id, "topics": topics, "error_code": error}
    named, unknown = None, []
    if group.topics is not None:
        named = []
        for t in group.topics:
            name = topic_name(ctx.broker, None, t.topic_id, by_id=True)
            if name is None:
                unknown.append({"topic_id": t.topic_id, "partitions": [
                    {**_partition(index, None), "error_code": ErrorCode.UNKNOWN_TOPIC_ID} for index in t.partition_indexes]})
            else:
                named.append(_Named(name, list(t.partition_indexes)))
    error, topics = _group(ctx, group.group_id, named, require_stable)
    by_id = []
    for t in topics:
        topic = ctx.broker.logs.topics.get(t["name"])
        if topic is not None:
            by_id.append({**t, "topic_id": topic.topic_id})
    return {"group_id": group.group_id, "topics": by_id + unknown, "error_code": error}


@routes.handles(9, min_version=1, max_version=10)
async def handle(ctx, request):
    require_stable = request.require_stable
    if ctx.version >= 8:
        return {"throttle_time_ms": 0, "groups": [_member_group(ctx, g, require_stable) for g in request.groups]}
    error, topics = _group(ctx, request.group_id, request.topics, require_stable)
    return {"throttle_time_ms": 0, "topics": topics, "error_code": error}
