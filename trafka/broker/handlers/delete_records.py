"""DeleteRecords (key 21), versions 0-2.

Behavior:
- Moves the partition's log start offset up to the given offset (-1: the high watermark);
  whole segments below it are deleted, and fetches below it get OFFSET_OUT_OF_RANGE.
- An offset above the high watermark is OFFSET_OUT_OF_RANGE; one below the current log start
  offset leaves it where it is.
- Refused as Kafka refuses (ReplicaManager.deleteRecordsOnLocalLog, Partition.deleteRecordsOnLeader):
  an internal topic's records (__consumer_offsets, __transaction_state, __share_group_state) are
  INVALID_TOPIC_EXCEPTION; a topic whose cleanup.policy lacks `delete` is POLICY_VIOLATION.
- In a simulated cluster the answer waits, as Kafka's delayed DeleteRecords, until every live
  replica's log start reached the offset (the low watermark), REQUEST_TIMED_OUT after the
  request's timeout.
"""

from __future__ import annotations

import trio

from trafka.broker.coordinators.runtime.internal_topic import INTERNAL_TOPICS
from trafka.broker.requests import routes
from trafka.broker.security.authorizer import TOPIC, Op, authorize
from trafka.broker.requests.topics import find_log, led_elsewhere
from trafka.storage.errors import OffsetOutOfRange
from trafka.wire.errors import ErrorCode

HIGH_WATERMARK = -1


def partition_error(index: int, error: ErrorCode) -> dict:
    return {"partition_index": index, "low_watermark": -1, "error_code": error}


def _delete(broker, topic: str, p) -> dict:
    if topic in INTERNAL_TOPICS:
        return partition_error(p.partition_index, ErrorCode.INVALID_TOPIC_EXCEPTION)
    if led_elsewhere(broker, topic, p.partition_index):
        return partition_error(p.partition_index, ErrorCode.NOT_LEADER_OR_FOLLOWER)
    log_ = find_log(broker, topic, p.partition_index)
    if log_ is None:
        return partition_error(p.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if not log_.config.delete:
        return partition_error(p.partition_index, ErrorCode.POLICY_VIOLATION)
    offset = log_.high_watermark if p.offset == HIGH_WATERMARK else p.offset
    if offset < 0:
        return partition_error(p.partition_index, ErrorCode.OFFSET_OUT_OF_RANGE)
    try:
        low_watermark = log_.delete_records_before(offset)
    except OffsetOutOfRange:
        return partition_error(p.partition_index, ErrorCode.OFFSET_OUT_OF_RANGE)
    return {"partition_index": p.partition_index, "low_watermark": low_watermark, "error_code": ErrorCode.NONE}


async def _await_low_watermarks(broker, answers: list, timeout_ms: int) -> None:
    """Each answer waits until the live replicas' log starts reached its low watermark."""
    replication = broker.cluster.replication
    pending = [(name, answer) for name, answer in answers if answer["error_code"] == ErrorCode.NONE]
    for name, answer in pending:
        replication.log_start_moved(broker, name, answer["partition_index"])

    def behind(name, answer) -> bool:
        return replication.low_watermark(broker, name, answer["partition_index"]) < answer["low_watermark"]

    with trio.move_on_after(max(timeout_ms, 0) / 1000):
        while any(behind(name, answer) for name, answer in pending):
            await broker.wait_for_data()
    for name, answer in pending:
        if behind(name, answer):
            answer.update(partition_error(answer["partition_index"], ErrorCode.REQUEST_TIMED_OUT))


@routes.handles(21, min_version=0, max_version=2)
async def handle(ctx, request):
    topics = [
        {"name": t.name, "partitions": [_delete(ctx.broker, t.name, p) for p in t.partitions]}
        if authorize(ctx, Op.DELETE, TOPIC, t.name) else
        {"name": t.name, "partitions": [partition_error(p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                                        for p in t.partitions]}
        for t in request.topics
    ]
    await _await_low_watermarks(ctx.broker, [(t["name"], answer) for t in topics for answer in t["partitions"]],
                                request.timeout_ms)
    return {"throttle_time_ms": 0, "topics": topics}
