"""ListOffsets (key 2), versions 1-7.

Behavior:
- timestamp -1 (latest): the high watermark (= log end offset on one broker); with
  isolation_level read_committed (v2+), the last stable offset.
- timestamp -2 (earliest): the log start offset, which retention and DeleteRecords move.
- timestamp -3 (max timestamp, v7): the offset and timestamp of the record with the largest
  timestamp; -1/-1 for an empty partition.
- any other timestamp: the first offset whose record timestamp is >= it, through the time
  index; -1/-1 when there is none, as in Kafka.
"""

from __future__ import annotations

from trafka.broker import registry
from trafka.broker.security.authorizer import TOPIC, Op, authorize
from trafka.broker.topics import find_log
from trafka.wire.errors import ErrorCode

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
UNKNOWN = -1


def partition_error(index: int, error: ErrorCode) -> dict:
    return {"partition_index": index, "error_code": error, "timestamp": UNKNOWN, "offset": UNKNOWN}


READ_COMMITTED = 1


def _lookup(log_, timestamp: int, read_committed: bool) -> tuple[int, int]:
    """(offset, timestamp) answering the query."""
    if timestamp == LATEST:
        return (log_.last_stable_offset if read_committed else log_.high_watermark), UNKNOWN
    if timestamp == EARLIEST:
        return log_.log_start_offset, UNKNOWN
    if timestamp == MAX_TIMESTAMP:
        found = log_.max_timestamp()
    else:
        found = log_.offset_for_timestamp(timestamp)
    return (found.offset, found.timestamp) if found is not None else (UNKNOWN, UNKNOWN)


def _partition(broker, topic: str, p, read_committed: bool) -> dict:
    index = p.partition_index
    log_ = find_log(broker, topic, index)
    if log_ is None:
        return partition_error(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if p.timestamp < MAX_TIMESTAMP:
        return partition_error(index, ErrorCode.UNSUPPORTED_VERSION)
    offset, timestamp = _lookup(log_, p.timestamp, read_committed)
    return {"partition_index": index, "error_code": ErrorCode.NONE, "timestamp": timestamp, "offset": offset, "leader_epoch": 0}


@registry.handles(2, min_version=1, max_version=7)
async def handle(ctx, request):
    broker = ctx.broker
    read_committed = request.isolation_level == READ_COMMITTED
    topics = []
    for t in request.topics:
        if not authorize(ctx, Op.DESCRIBE, TOPIC, t.name):
            topics.append({"name": t.name, "partitions": [
                partition_error(p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for p in t.partitions]})
            continue
        topics.append({"name": t.name, "partitions": [_partition(broker, t.name, p, read_committed) for p in t.partitions]})
    return {"throttle_time_ms": 0, "topics": topics}
