"""ListOffsets (key 2), versions 1-11.

Behavior:
- timestamp -1 (latest): the high watermark (= log end offset on one broker); with
  isolation_level read_committed (v2+), the last stable offset.
- timestamp -2 (earliest): the log start offset, which retention and DeleteRecords move.
- timestamp -3 (max timestamp, v7): the offset and timestamp of the record with the largest
  timestamp; -1/-1 for an empty partition.
- timestamp -4 (earliest local, v8): the log start offset of the local log, which is the
  whole log here (no tiered storage).
- timestamp -5 (latest tiered, v9): offset -1, as Kafka answers when remote storage is not
  enabled (nothing is tiered).
- timestamp -6 (earliest pending upload, v11, KIP-1023): offset -1 likewise (nothing waits to
  be tiered).
- v10's timeout_ms bounds remote lookups; with no tiered storage every answer is local.
- A special timestamp newer than the request version is UNSUPPORTED_VERSION.
- any other timestamp: the first offset whose record timestamp is >= it, through the time
  index; -1/-1 (leader epoch -1) when there is none, as in Kafka.
- A client's request (replica id -1) finds nothing at or past what it may fetch (Kafka's
  lastFetchableOffset): an offset found by timestamp or max timestamp at or past the last
  stable offset (read_committed) or the high watermark is answered -1/-1. A debugging (-2) or
  follower request reads to the log end.
- A new leader whose high watermark is still below the offset its leader epoch began at
  (followers have not confirmed what it had when elected) answers a client's latest, and a
  lookup it cannot answer below its high watermark, OFFSET_NOT_AVAILABLE (v5+; before,
  LEADER_NOT_AVAILABLE): both retriable, clients ask again (Kafka's maybeOffsetsError).
- A partition named twice in one request is INVALID_REQUEST at each place.
- The leader epoch answered is Kafka's Partition's: the partition's current leader epoch for
  LATEST, else the epoch of the batch holding the offset found (the leader epoch cache's
  epochForOffset). A KIP-320 client validates its position with it (OffsetForLeaderEpoch): an
  epoch older than the one the offset was written under reads as a truncation and rewinds.
- v4+ current_leader_epoch is checked before leadership, as Kafka's Partition does:
  FENCED_LEADER_EPOCH when older than the partition's, UNKNOWN_LEADER_EPOCH when newer.
"""

from __future__ import annotations

from collections import Counter

from trafka.broker.requests import routes
from trafka.broker.operations.log_tasks import load_off_loop
from trafka.broker.security.authorizer import TOPIC, Op, authorize
from trafka.broker.requests.topics import current_leader_epoch, find_log, leader_epoch_error, led_elsewhere
from trafka.storage.log_replica import epoch_at
from trafka.wire.errors import ErrorCode

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL = -4
LATEST_TIERED = -5
EARLIEST_PENDING_UPLOAD = -6
UNKNOWN = -1


def lowest_special_timestamp(version: int) -> int:
    """-4 needs v8, -5 v9 and -6 v11; -3 has always been answered (clients send it from v7)."""
    if version >= 11:
        return EARLIEST_PENDING_UPLOAD
    if version >= 9:
        return LATEST_TIERED
    return EARLIEST_LOCAL if version == 8 else MAX_TIMESTAMP


def partition_error(index: int, error: ErrorCode) -> dict:
    return {"partition_index": index, "error_code": error, "timestamp": UNKNOWN, "offset": UNKNOWN}


READ_COMMITTED = 1
CONSUMER = -1  # the replica id of a client's request


class OffsetNotAvailable(Exception):
    """A new leader's high watermark is still below where its leader epoch began."""


def _lookup(log_, timestamp: int, read_committed: bool | None, current_epoch: int,
            not_available: bool) -> tuple[int, int, int]:
    """(offset, timestamp, leader epoch) answering the query, as Kafka's
    Partition.fetchOffsetForTimestamp and ReplicaManager.fetchOffset: a client
    (`read_committed` not None) gets nothing at or past its last fetchable offset (the last
    stable offset, or the high watermark), and OffsetNotAvailable while `not_available`."""
    last_fetchable = (log_.log_end_offset if read_committed is None
                      else log_.last_stable_offset if read_committed else log_.high_watermark)
    if timestamp == LATEST:
        if not_available:
            raise OffsetNotAvailable
        return last_fetchable, UNKNOWN, current_epoch
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return log_.log_start_offset, UNKNOWN, epoch_at(log_, log_.log_start_offset)
    if timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return UNKNOWN, UNKNOWN, UNKNOWN
    if timestamp == MAX_TIMESTAMP:
        found = log_.max_timestamp()
    else:
        found = log_.offset_for_timestamp(timestamp)
    if found is None or found.offset >= last_fetchable:
        if not_available:
            raise OffsetNotAvailable
        return UNKNOWN, UNKNOWN, UNKNOWN
    return found.offset, found.timestamp, epoch_at(log_, found.offset)


def _lagging_new_leader(broker, topic: str, index: int, log_) -> bool:
    """Kafka's maybeOffsetsError: this leader's high watermark has not yet reached the offset its
    leader epoch began at (it became leader with records its followers had not confirmed)."""
    if log_.high_watermark_hold is None:
        return False  # one replica, or a leader that holds no high watermark: it is the log end
    partition = broker.cluster.replication.partition(broker, topic, index)
    return partition.leader_epoch_start_offset > log_.high_watermark


def _partition(broker, topic: str, p, read_committed: bool | None, version: int) -> dict:
    index = p.partition_index
    log_ = find_log(broker, topic, index)
    if log_ is None:
        return partition_error(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    fenced = leader_epoch_error(broker, topic, index, p.current_leader_epoch)
    if fenced is not None:
        return partition_error(index, fenced)
    if led_elsewhere(broker, topic, index):
        return partition_error(index, ErrorCode.NOT_LEADER_OR_FOLLOWER)
    if p.timestamp < lowest_special_timestamp(version):
        return partition_error(index, ErrorCode.UNSUPPORTED_VERSION)
    lagging = read_committed is not None and _lagging_new_leader(broker, topic, index, log_)
    try:
        offset, timestamp, epoch = _lookup(log_, p.timestamp, read_committed, current_leader_epoch(broker, topic, index),
                                           lagging)
    except OffsetNotAvailable:  # retriable: clients ask again
        return partition_error(index, ErrorCode.OFFSET_NOT_AVAILABLE if version >= 5 else ErrorCode.LEADER_NOT_AVAILABLE)
    return {"partition_index": index, "error_code": ErrorCode.NONE, "timestamp": timestamp, "offset": offset, "leader_epoch": epoch}


@routes.handles(2, min_version=1, max_version=11)
async def handle(ctx, request):
    broker = ctx.broker
    # A consumer's request (replica id -1) reads up to what its isolation level may fetch; a
    # debugging one (-2) or a follower's, up to the log end (Kafka's isolationLevelOpt None).
    read_committed = request.isolation_level == READ_COMMITTED if request.replica_id == CONSUMER else None
    await load_off_loop(broker, [(t.name, p.partition_index) for t in request.topics for p in t.partitions])
    named = Counter((t.name, p.partition_index) for t in request.topics for p in t.partitions)
    topics = []
    for t in request.topics:
        if not authorize(ctx, Op.DESCRIBE, TOPIC, t.name):
            topics.append({"name": t.name, "partitions": [
                partition_error(p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for p in t.partitions]})
            continue
        topics.append({"name": t.name, "partitions": [
            partition_error(p.partition_index, ErrorCode.INVALID_REQUEST) if named[(t.name, p.partition_index)] > 1
            else _partition(broker, t.name, p, read_committed, ctx.version) for p in t.partitions]})
    return {"throttle_time_ms": 0, "topics": topics}
