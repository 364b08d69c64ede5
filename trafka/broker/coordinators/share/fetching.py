"""What ShareFetch and ShareAcknowledge share: the session step, the acknowledgements, and the
acquisition of records from the log (KIP-932), as Kafka's SharePartitionManager does them.

A fetch answers with whole batches read from the log and, per partition, the runs of offsets
in them this member acquired (`acquired_records`, with their delivery counts); the client
hands out exactly those. Offsets of control batches (transaction markers) are never delivered:
they are archived as gaps.
"""

from __future__ import annotations

from trafka.broker.security.authorizer import GROUP, TOPIC, Op, authorize
from trafka.broker.coordinators.share.coordinator import FINAL_EPOCH, ShareSessionError
from trafka.broker.metadata.group_configs import duration_ms
from trafka.broker.coordinators.share.formats import SharePartitionKey
from trafka.broker.coordinators.share.partition import AcquireLimits, AcquireMode
from trafka.broker.requests.topics import led_elsewhere
from trafka.storage.errors import OffsetOutOfRange, StorageError
from trafka.wire import records as rec
from trafka.wire.errors import ErrorCode


class Refused(Exception):
    """The whole request is answered with this error."""

    def __init__(self, error: ErrorCode, message: str | None = None):
        super().__init__(message or error.name)
        self.error = error
        self.message = message


def session_step(ctx, request, *, fetching: bool):
    """Check the request as a whole and move the member's share session: the session."""
    share = ctx.broker.share_coordinator
    if not request.group_id or not request.member_id:
        raise Refused(ErrorCode.INVALID_REQUEST, "GroupId and MemberId must be set.")
    if not authorize(ctx, Op.READ, GROUP, request.group_id):
        raise Refused(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    epoch = request.share_session_epoch
    has_acks = any(p.acknowledgement_batches for t in request.topics for p in t.partitions)
    if epoch == 0 and (has_acks or not fetching):
        raise Refused(ErrorCode.INVALID_SHARE_SESSION_EPOCH if not fetching else ErrorCode.INVALID_REQUEST,
                      "A new share session carries no acknowledgements.")
    if getattr(request, "share_acquire_mode", 0) not in (0, 1):
        raise Refused(ErrorCode.INVALID_REQUEST, "ShareAcquireMode must be 0 (batch_optimized) or 1 (record_limit).")
    named = [(t.topic_id, p.partition_index) for t in request.topics for p in t.partitions] if fetching else []
    forgotten = [(t.topic_id, p) for t in getattr(request, "forgotten_topics_data", ()) for p in t.partitions]
    try:
        return share.open_session(request.group_id, request.member_id, epoch, named, forgotten, ctx.peer)
    except ShareSessionError as exc:
        raise Refused(exc.error, str(exc)) from None


def _topic(ctx, topic_id):
    """(topic name, error): UNKNOWN_TOPIC_ID, or TOPIC_AUTHORIZATION_FAILED without READ."""
    try:
        name = ctx.broker.logs.topic_by_id(topic_id).name
    except StorageError:
        return None, ErrorCode.UNKNOWN_TOPIC_ID
    if not authorize(ctx, Op.READ, TOPIC, name):
        return name, ErrorCode.TOPIC_AUTHORIZATION_FAILED
    return name, ErrorCode.NONE


def acknowledge_all(ctx, request) -> dict[tuple, ErrorCode]:
    """Each partition's acknowledgement batches applied (all or nothing per partition):
    (topic id, partition) -> error."""
    share = ctx.broker.share_coordinator
    results = {}
    for t in request.topics:
        name, error = _topic(ctx, t.topic_id)
        for p in t.partitions:
            if not p.acknowledgement_batches:
                continue
            if error:
                results[(t.topic_id, p.partition_index)] = error
                continue
            if led_elsewhere(ctx.broker, name, p.partition_index):  # its records in flight are on the leader
                results[(t.topic_id, p.partition_index)] = ErrorCode.NOT_LEADER_OR_FOLLOWER
                continue
            key = SharePartitionKey(request.group_id, t.topic_id, p.partition_index)
            if share.existing(key) is None:
                results[(t.topic_id, p.partition_index)] = ErrorCode.INVALID_RECORD_STATE
                continue
            results[(t.topic_id, p.partition_index)] = share.acknowledge(
                key, request.member_id, p.acknowledgement_batches, renew=getattr(request, "is_renew_ack", False))
    return results


def acquire_all(ctx, request, session, max_records: int) -> tuple[dict[tuple, dict], int]:
    """Records acquired now from the session's partitions: (topic id, partition) -> the
    partition's answer fields, and how many records were acquired."""
    broker, share = ctx.broker, ctx.broker.share_coordinator
    now = broker.clock.timer_ms()  # lock deadlines
    answers: dict[tuple, dict] = {}
    acquired_total = 0
    budget = max(request.max_bytes, 1)
    for topic_id, index in sorted(session.partitions, key=lambda tp: (str(tp[0]), tp[1])):
        name, error = _topic(ctx, topic_id)
        if error:
            answers[(topic_id, index)] = {"error_code": error}
            continue
        try:
            log_ = broker.logs.log(name, index)
        except StorageError:
            answers[(topic_id, index)] = {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
            continue
        if led_elsewhere(broker, name, index):
            answers[(topic_id, index)] = {"error_code": ErrorCode.NOT_LEADER_OR_FOLLOWER}
            continue
        if acquired_total >= max_records or budget <= 0:
            continue
        key = SharePartitionKey(request.group_id, topic_id, index)
        error = share.share_partition(key, _reset_offset(broker, request.group_id, log_))
        if error:
            answers[(topic_id, index)] = {"error_code": error}
            continue
        share.expire_locks(key)
        sp = share.existing(key)
        max_in_flight = share.max_in_flight(request.group_id)
        committed = broker.group_configs.value(request.group_id, "share.isolation.level") == "read_committed"
        end = log_.last_stable_offset if committed else log_.high_watermark
        start = sp.acquirable(log_.log_start_offset, end, max_in_flight)
        if start is None:
            continue
        aborted = _aborted_ranges(log_, start, end) if committed else {}
        read = _LogBatches(log_, start, end, budget, committed, aborted)
        limits = AcquireLimits(max_records - acquired_total, max(getattr(request, "batch_size", 0), 0),
                               AcquireMode(getattr(request, "share_acquire_mode", 0)), max_in_flight)
        acquired = sp.acquire(read, request.member_id, now, share.lock_ms(request.group_id),
                              share.delivery_limit(request.group_id), limits, gaps=read.gaps)
        if not acquired:
            continue
        share.locked(key)  # a new lock deadline for the timer
        acquired_total += sum(last - first + 1 for first, last, _ in acquired)
        data = read.holding(acquired[0][0], acquired[-1][1])
        budget -= len(data)
        answers[(topic_id, index)] = {
            "error_code": ErrorCode.NONE, "records": data,
            "acquired_records": [{"first_offset": f, "last_offset": last, "delivery_count": c} for f, last, c in acquired],
        }
    return answers, acquired_total


# A share fetch reads the log this much at a time, and reads on only while the acquisition asks
# for more batches: reading (and answering) all of max_bytes of a deep backlog to hand out
# max_records made a work queue that fell behind its producer several times slower.
READ_CHUNK_BYTES = 64 * 1024


class _LogBatches:
    """The offset spans of the record batches of the log from `start` on, read a chunk at a
    time as they are asked for, up to `budget` bytes and never reaching `end`: what
    SharePartition.acquire takes (iterating stops the reads). Offsets of control batches and of
    aborted transactions' batches (read_committed) go to `gaps` instead, read by acquire after
    the spans. `holding` is the answer's records: the batches read that hold the acquired
    offsets, as Kafka slices a share fetch's records to the acquired batches."""

    def __init__(self, log_, start: int, end: int, budget: int, committed: bool, aborted: dict):
        self.log, self.start, self.end, self.budget, self.committed, self.aborted = log_, start, end, budget, committed, aborted
        self.gaps: list[int] = []
        self.read: list[tuple[range, memoryview]] = []  # every batch read, data or not, in offset order

    def __iter__(self):
        offset, left, first_chunk = self.start, self.budget, True
        while offset < self.end and left > 0:
            data = self._chunk(offset, left, first_chunk)
            if not data:
                return
            first_chunk = False
            left -= len(data)
            view = memoryview(data)
            for pos, header in rec.iter_batches(data, validate=False):
                span = range(header.base_offset, header.next_offset)
                self.read.append((span, view[pos:pos + header.size]))
                offset = header.next_offset
                if header.is_control or any(first <= header.base_offset <= last
                                            for first, last in self.aborted.get(header.producer_id, ())):
                    self.gaps.extend(span)
                else:
                    yield span

    def _chunk(self, offset: int, left: int, first: bool) -> bytes:
        max_offset = self.end if self.committed else None
        try:
            data = self.log.read(offset, min(left, READ_CHUNK_BYTES), min_one_batch=first, max_offset=max_offset).to_bytes()
            if not data and left > READ_CHUNK_BYTES:  # a batch larger than a chunk that the budget allows
                data = self.log.read(offset, left, min_one_batch=False, max_offset=max_offset).to_bytes()
        except OffsetOutOfRange:
            return b""
        return data

    def holding(self, first: int, last: int) -> bytes:
        """The batches read from the one holding `first` to the one holding `last`."""
        return b"".join(view for span, view in self.read if span.stop > first and span.start <= last)


def _reset_offset(broker, group_id: str, log_) -> int:
    """Where a share group starts a partition it never read: share.auto.offset.reset, latest
    (the log end, Kafka's default), earliest (the log start) or by_duration:<ISO-8601> (the
    first record at most that old, else the log end)."""
    policy = broker.group_configs.value(group_id, "share.auto.offset.reset").strip().lower()
    if policy == "earliest":
        return log_.log_start_offset
    if policy.startswith("by_duration:"):
        found = log_.offset_for_timestamp(broker.clock.time_ms() - (duration_ms(policy.split(":", 1)[1]) or 0))
        if found is not None:
            return found.offset
    return log_.high_watermark


def _aborted_ranges(log_, start: int, end: int) -> dict[int, list[tuple[int, int]]]:
    """producer id -> (first offset, marker offset) of its aborted transactions in [start, end):
    share.isolation.level=read_committed never acquires their records."""
    found: dict[int, list[tuple[int, int]]] = {}
    for txn in log_.collect_aborted(start, end):
        found.setdefault(txn.producer_id, []).append((txn.first_offset, txn.last_offset))
    return found


def next_lock_deadline(ctx, request, session) -> int | None:
    share = ctx.broker.share_coordinator
    found = [sp.next_lock_deadline() for (topic_id, index) in session.partitions
             if (sp := share.existing(SharePartitionKey(request.group_id, topic_id, index))) is not None]
    return min((d for d in found if d is not None), default=None)


def _current_leader(broker, topic_id, index: int) -> dict:
    """The partition's leader and leader epoch, as Metadata gives them."""
    state = broker.cluster.controller.partition(topic_id, index)
    return {"leader_id": state.leader, "leader_epoch": state.leader_epoch}


def responses(ctx, answers: dict[tuple, dict], acks: dict[tuple, ErrorCode], *, fetching: bool) -> list[dict]:
    """The response's topics: every partition with records, an error or an acknowledgement."""
    by_topic: dict = {}
    for tp in sorted({*answers, *acks}, key=lambda tp: (str(tp[0]), tp[1])):
        answer = answers.get(tp, {})
        entry = {"partition_index": tp[1], "error_code": answer.get("error_code", ErrorCode.NONE),
                 "current_leader": _current_leader(ctx.broker, *tp)}
        if fetching:
            # Empty records, never null: librdkafka drops a whole answer holding a null record set.
            entry.update(acknowledge_error_code=acks.get(tp, ErrorCode.NONE), records=answer.get("records") or b"",
                         acquired_records=answer.get("acquired_records", []))
        elif tp in acks:
            entry["error_code"] = acks[tp]
        by_topic.setdefault(tp[0], []).append(entry)
    return [{"topic_id": topic_id, "partitions": partitions} for topic_id, partitions in by_topic.items()]


__all__ = ["FINAL_EPOCH", "Refused", "acknowledge_all", "acquire_all", "next_lock_deadline", "responses", "session_step"]
