"""Fetch (key 1), versions 4-18.

Behavior:
- Batches as they were produced: a fetch at an offset inside a batch starts with that batch,
  and the client skips the records before its offset.
- Like Kafka, a partition's records are the byte range from that batch up to the size limit
  (one index lookup, no per-batch work), so the last batch may be cut short; every client drops
  a trailing partial batch. Large ranges go from the segment file to the socket by os.sendfile.
- At least one whole batch comes back for the first partition that has data, even when it is
  larger than max_bytes or partition_max_bytes (KIP-74); later partitions respect the limits,
  and one whose first batch does not fit what is left gets no records (Kafka's ReplicaManager
  answers an incomplete first entry so): it comes first in a later answer.
  The answer's limit is the smaller of the request's max_bytes and the broker's
  `fetch.max.bytes` (55 MiB by default, as in Kafka).
- Long polling: with fewer than min_bytes ready the handler waits up to max_wait_ms on the
  broker's data-arrived event, set by every append; no sleep loops.
- No fetch sessions (KIP-227): session id 0 tells the client to send full requests.
- v13+ name topics by id: an id no topic has is UNKNOWN_TOPIC_ID for each of its partitions,
  as in Kafka (READ is checked on the topic the id names). The follower-only fields (replica
  state, directory id, high watermark) are read and ignored: followers of a simulated cluster
  copy in process (broker/replication.py), not by Fetch. There a partition this broker does not
  lead is NOT_LEADER_OR_FOLLOWER (cluster.fetch_refusal), and KIP-392 names a follower in the
  consumer's rack; the leader hints (v12+ current_leader, v16+ node_endpoints) are left empty
  (docs/cluster.md).
- v9+ current_leader_epoch is checked first, as Kafka's Partition does: FENCED_LEADER_EPOCH
  when older than the partition's, UNKNOWN_LEADER_EPOCH when newer (-1 skips the check).
- An offset between the high watermark and the log end answers no records and no error (Kafka's
  LocalLog.read); only one below the log start or past the log end is OFFSET_OUT_OF_RANGE.
- v12+ last_fetched_epoch (KIP-320) is checked as Kafka's Partition checks it: when the leader's
  log of that epoch ends before the fetch offset, the answer has no records and names the
  diverging epoch and its end offset (the client detects the truncation); an epoch the leader
  cannot place is OFFSET_OUT_OF_RANGE.
- isolation_level read_committed (1): never a batch at or past the last stable offset (the
  first offset of the oldest open transaction), and `aborted_transactions` lists the aborted
  transactions overlapping what is returned (from the segments' .txnindex files) so the
  client drops their records. read_uncommitted (0) reads to the high watermark, aborted
  records included, with aborted_transactions null, as in Kafka.
"""

from __future__ import annotations

import trio

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import TOPIC, Op, authorize
from trafka.broker.operations.log_tasks import load_off_loop
from trafka.broker.cluster.describe import fetch_refusal
from trafka.broker.requests.topics import current_leader_epoch, find_log, leader_epoch_error, topic_name
from trafka.storage.errors import OffsetOutOfRange
from trafka.storage.log_replica import epoch_at, epoch_end_offset
from trafka.wire.errors import ErrorCode
from trafka.wire.framing import FrameWriter

# Slices at least this big are sent by sendfile (FrameWriter keeps them as their own part);
# smaller ones are read and joined into the frame, which is cheaper than a syscall pair.
_SENDFILE_MIN = FrameWriter.LARGE


READ_COMMITTED = 1


def partition_error(index: int, error: ErrorCode, log_=None) -> dict:
    hw = log_.high_watermark if log_ is not None else -1
    return {
        "partition_index": index,
        "error_code": error,
        "high_watermark": hw,
        "last_stable_offset": log_.last_stable_offset if log_ is not None else -1,
        "log_start_offset": log_.log_start_offset if log_ is not None else -1,
        "records": b"",  # Kafka sends an empty record set, never null: librdkafka rejects -1
    }


FIRST_VERSION_WITH_TOPIC_IDS = 13


def _read_all(broker, request, names: list[str | None], refused=frozenset()) -> tuple[list[dict], int]:
    """One pass over the requested partitions: the response topics and the bytes gathered.
    `names` are the requested topics' names (None: an unknown topic id); topics in `refused`
    (no READ) are TOPIC_AUTHORIZATION_FAILED."""
    budget = min(request.max_bytes, broker.config["fetch.max.bytes"])
    read_committed = request.isolation_level == READ_COMMITTED
    total = 0
    topics = []
    for wanted, name in zip(request.topics, names):
        refusal = ErrorCode.UNKNOWN_TOPIC_ID if name is None else ErrorCode.TOPIC_AUTHORIZATION_FAILED if name in refused else None
        if refusal is not None:
            topics.append({"topic": wanted.topic, "topic_id": wanted.topic_id, "partitions": [
                partition_error(p.partition, refusal) for p in wanted.partitions]})
            continue
        partitions = []
        for p in wanted.partitions:
            index = p.partition
            refusal = leader_epoch_error(broker, name, index, p.current_leader_epoch)
            if refusal is not None:  # checked before leadership, as Kafka's Partition does
                partitions.append(partition_error(index, refusal))
                continue
            refusal, preferred = fetch_refusal(broker, name, index, request.rack_id)
            if refusal is not None:
                partitions.append(partition_error(index, refusal))
                continue
            log_ = find_log(broker, name, index)
            if log_ is None:
                partitions.append(partition_error(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            if preferred >= 0:  # KIP-392: no records, the replica in the consumer's rack to ask instead
                partitions.append(partition_error(index, ErrorCode.NONE, log_) | {"preferred_read_replica": preferred})
                continue
            if getattr(p, "last_fetched_epoch", -1) >= 0:
                diverging = _diverging(log_, p.fetch_offset, p.last_fetched_epoch, current_leader_epoch(broker, name, index))
                if isinstance(diverging, ErrorCode):
                    partitions.append(partition_error(index, diverging, log_))
                    continue
                if diverging is not None:  # no records: where the client's log parts from the leader's
                    partitions.append(partition_error(index, ErrorCode.NONE, log_) | {"diverging_epoch": diverging})
                    continue
            limit = min(p.partition_max_bytes, budget - total)
            try:
                # At least one batch only while nothing has been gathered yet (KIP-74).
                read = log_.read(p.fetch_offset, max(limit, 0), min_one_batch=total == 0, partial_tail=True,
                                 max_offset=log_.last_stable_offset if read_committed else None)
            except OffsetOutOfRange:
                partitions.append(partition_error(index, ErrorCode.OFFSET_OUT_OF_RANGE, log_))
                continue
            # Large slices stay file ranges until the socket (sendfile); small ones are read.
            data = [piece if piece.size >= _SENDFILE_MIN else piece.read() for piece in read.slices]
            total += read.size
            partitions.append({
                "partition_index": index,
                "error_code": ErrorCode.NONE,
                "high_watermark": read.high_watermark,
                "last_stable_offset": log_.last_stable_offset,
                "log_start_offset": read.log_start_offset,
                "aborted_transactions": _aborted(log_, p.fetch_offset, read) if read_committed else None,
                "records": data,
            })
        topics.append({"topic": wanted.topic, "topic_id": wanted.topic_id, "partitions": partitions})
    return topics, total


def _diverging(log_, fetch_offset: int, last_fetched_epoch: int, current_epoch: int) -> ErrorCode | dict | None:
    """Kafka's validateFetchOffsetAndMaybeGetDivergingEpoch: where the leader's log of the
    client's last fetched epoch ends (OffsetForLeaderEpoch's answer); OFFSET_OUT_OF_RANGE when
    the leader cannot tell (an epoch it never had) or the offset is below the log start; the
    diverging epoch and end offset when that epoch ended before the fetch offset (or the leader
    only has an older one); None when the client's position agrees with the leader's log."""
    if last_fetched_epoch == current_epoch or (fetch_offset > log_.log_start_offset
                                               and epoch_at(log_, fetch_offset - 1) == last_fetched_epoch):
        # The common case, answered without walking the log's epochs: the client's last batch
        # (the one holding the offset before its position) is of the epoch it names, so the
        # leader's writes of that epoch end at or after its position.
        return None if log_.log_start_offset <= fetch_offset else ErrorCode.OFFSET_OUT_OF_RANGE
    epoch, end = epoch_end_offset(log_, last_fetched_epoch, current_epoch)
    if epoch < 0 or end < 0 or fetch_offset < log_.log_start_offset:
        return ErrorCode.OFFSET_OUT_OF_RANGE
    if epoch < last_fetched_epoch or end < fetch_offset:
        return {"epoch": epoch, "end_offset": end}
    return None


def _aborted(log_, fetch_offset: int, read) -> list[dict]:
    """Kafka's collectAbortedTransactions: those overlapping [fetch_offset, last stable offset)."""
    if not read.slices:
        return []
    upper = log_.last_stable_offset
    return [
        {"producer_id": t.producer_id, "first_offset": t.first_offset} for t in log_.collect_aborted(fetch_offset, upper)
    ]


def _has_error(topics: list[dict]) -> bool:
    return any(p["error_code"] != ErrorCode.NONE for t in topics for p in t["partitions"])


@routes.handles(1, min_version=4, max_version=18)
async def handle(ctx, request):
    broker = ctx.broker
    deadline = trio.current_time() + max(request.max_wait_ms, 0) / 1000
    by_id = ctx.version >= FIRST_VERSION_WITH_TOPIC_IDS
    names = [topic_name(broker, t.topic, t.topic_id, by_id=by_id) for t in request.topics]
    refused = {name for name in names if name is not None and not authorize(ctx, Op.READ, TOPIC, name)}
    await load_off_loop(broker, [(name, p.partition) for t, name in zip(request.topics, names)
                                 if name is not None and name not in refused for p in t.partitions])
    while True:
        topics, total = _read_all(broker, request, names, refused)
        if total >= request.min_bytes or _has_error(topics) or trio.current_time() >= deadline:
            break
        with trio.move_on_at(deadline):
            await broker.wait_for_data()
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "session_id": 0,
        "responses": topics,
    }
