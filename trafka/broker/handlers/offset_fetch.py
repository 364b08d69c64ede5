"""OffsetFetch (key 9), versions 1-9.

Behavior:
- A partition without a committed offset (or of an unknown topic or group) answers offset -1,
  empty metadata and no error, as in Kafka; the consumer then applies auto.offset.reset.
- A null topic list (v2+) fetches every offset the group committed.
- v8 fetches several groups in one request and answers per group.
- v9 carries each group's member id and member epoch: a member of a consumer-protocol group
  (KIP-848) that is unknown gets UNKNOWN_MEMBER_ID, one with another epoch STALE_MEMBER_EPOCH,
  as the group's error with no topics. Classic groups, and fetches without a member id and
  epoch (admin clients), are not checked, as in Kafka.
- require_stable (v7+): a partition with offsets of an open transaction pending (TxnOffsetCommit)
  answers UNSTABLE_OFFSET_COMMIT, and the consumer retries; without it, the last committed
  offset comes back, as in Kafka.
"""

from __future__ import annotations

from trafka.broker import registry
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


def _group(coordinator, group, require_stable: bool) -> dict:
    error = coordinator.validate_offset_fetch(group.group_id, group.member_id, group.member_epoch)
    if error:
        return {"group_id": group.group_id, "topics": [], "error_code": error}
    return {"group_id": group.group_id, "topics": _topics(coordinator, group.group_id, group.topics, require_stable), "error_code": ErrorCode.NONE}


@registry.handles(9, min_version=1, max_version=9)
async def handle(ctx, request):
    coordinator = ctx.broker.group_coordinator
    require_stable = request.require_stable
    if ctx.version >= 8:
        return {"throttle_time_ms": 0, "groups": [_group(coordinator, g, require_stable) for g in request.groups]}
    return {
        "throttle_time_ms": 0,
        "topics": _topics(coordinator, request.group_id, request.topics, require_stable),
        "error_code": ErrorCode.NONE,
    }
