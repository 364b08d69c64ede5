"""One partition as one share group consumes it: Kafka's SharePartition (KIP-932).

Records from the share-partition start offset (SPSO) on are in flight, each in one state:

    AVAILABLE --acquire--> ACQUIRED --ACCEPT--> ACKNOWLEDGED
        ^                     |  --REJECT--> ARCHIVED
        +-- RELEASE / lock expiry --+   (ARCHIVED instead when the delivery count limit is reached)

Offsets at or past the share-partition end offset (the next offset never yet acquired) are
AVAILABLE without an entry. An acquisition hands a member a record for
`share.record.lock.duration.ms`, raises its delivery count, and archives it instead once the
count reached `group.share.delivery.count.limit`. ACKNOWLEDGED and ARCHIVED records at the
start are dropped and the start offset moves past them, so the in-flight map stays small.

Pure state, no I/O: the share coordinator (coordinator.py) reads batches from the log, asks
`acquire`, applies acknowledgements, expires locks, and writes `snapshot()` to
`__share_group_state` (formats.py) when the durable part changed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from trafka.wire.errors import ErrorCode


class RecordState(enum.IntEnum):
    """Kafka's RecordState codes (the DeliveryState of the state records)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AcknowledgeType(enum.IntEnum):
    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4  # ShareFetch / ShareAcknowledge v2 (KIP-1222): keep the record, lock it afresh


class AcquireMode(enum.IntEnum):
    """ShareFetch v2's ShareAcquireMode (KIP-1206)."""

    BATCH_OPTIMIZED = 0
    RECORD_LIMIT = 1


@dataclass(frozen=True)
class AcquireLimits:
    """What one acquisition may take: `max_records` (ShareFetch MaxRecords, what is left of it),
    `batch_size` (BatchSize: batch_optimized runs end at a batch boundary once this long; 0 = no
    cut), the mode, and `max_in_flight` (group.share.partition.max.record.locks)."""

    max_records: int
    batch_size: int = 0
    mode: AcquireMode = AcquireMode.BATCH_OPTIMIZED
    max_in_flight: int | None = None


@dataclass(slots=True)
class InFlight:
    state: RecordState
    delivery_count: int = 0
    member_id: str | None = None
    lock_deadline: int | None = None

    def copy(self) -> "InFlight":
        return InFlight(self.state, self.delivery_count, self.member_id, self.lock_deadline)


class SharePartition:
    def __init__(self, start_offset: int):
        self.start_offset = start_offset  # SPSO: below it, every record is done with
        self.end_offset = start_offset  # the next offset never acquired
        self.records: dict[int, InFlight] = {}  # start_offset <= offset < end_offset
        self._earliest_lock: int | None = None  # never later than the earliest lock deadline
        self._owned: set[int] | None = None  # a fork's entries of its own; None: all of them
        # No record below it is AVAILABLE (records become available again only by a release or
        # an expired lock, which move it back), so `acquirable` need not rescan the window of
        # acquired records at every fetch.
        self._available_from = start_offset

    def fork(self) -> "SharePartition":
        """A copy to change and install, or drop, in its place (the coordinator writes it first).
        Its entries are the original's until it changes one (`_own`), so a fork costs one copy
        of the offset map, not of every in-flight record."""
        twin = SharePartition.__new__(SharePartition)
        twin.start_offset, twin.end_offset = self.start_offset, self.end_offset
        twin.records, twin._earliest_lock, twin._owned = dict(self.records), self._earliest_lock, set()
        twin._available_from = self._available_from
        return twin

    def installed(self) -> "SharePartition":
        """This fork replaces its original, which is dropped: every entry is its own now."""
        self._owned = None
        return self

    def _own(self, offset: int) -> InFlight:
        entry = self.records[offset]
        if self._owned is not None and offset not in self._owned:
            entry = self.records[offset] = entry.copy()
            self._owned.add(offset)
        return entry

    # --- acquiring ----------------------------------------------------------------------------

    def acquirable(self, log_start: int, log_end: int, max_in_flight: int | None = None) -> int | None:
        """The first offset that could be acquired now, or None. Past the share-partition end
        offset only while fewer than `max_in_flight` records are in flight
        (group.share.partition.max.record.locks)."""
        if self.start_offset < log_start:
            self._move_start(log_start)
        records = self.records
        for offset in range(max(self.start_offset, self._available_from), self.end_offset):
            entry = records.get(offset)
            if entry is None or entry.state is RecordState.AVAILABLE:
                self._available_from = offset
                return offset
        self._available_from = self.end_offset
        if self.end_offset >= log_end or not self._window_open(max_in_flight):
            return None
        return self.end_offset

    def acquire(self, batches: list[range], member_id: str, now: int, lock_ms: int, delivery_limit: int,
                limits: AcquireLimits, gaps: list[int] = ()) -> list[tuple[int, int, int]]:
        """Acquire for `member_id` the AVAILABLE records of `batches` (the offset spans of the
        record batches read from the log, in order) within `limits`; (first, last, delivery
        count) runs. `gaps` are offsets read that hold no record to deliver (transaction
        markers): archived.

        BATCH_OPTIMIZED takes whole batches and stops after the batch that reached
        `max_records`; RECORD_LIMIT never takes more than `max_records` (KIP-1206). Either way
        no batch past the end offset is begun once `max_in_flight` records are in flight."""
        runs: list[tuple[int, int, int]] = []
        count = 0
        stopped_at = None
        per_record = limits.mode is AcquireMode.RECORD_LIMIT
        for span in batches:
            if count >= limits.max_records or (span.stop > self.end_offset and not self._window_open(limits.max_in_flight)):
                stopped_at = span.start
                break
            # In batch_optimized mode a run holding batch_size records ends at a batch boundary.
            cut = not per_record and bool(runs) and 0 < limits.batch_size <= runs[-1][1] - runs[-1][0] + 1
            for offset in span:
                if per_record and count >= limits.max_records:
                    stopped_at = offset
                    break
                if offset < self.start_offset:
                    continue
                if offset >= self.end_offset:
                    for gap in range(self.end_offset, offset):  # no record there (compacted, control)
                        self.records[gap] = InFlight(RecordState.ARCHIVED)
                    self.end_offset = offset + 1
                    self.records[offset] = InFlight(RecordState.AVAILABLE)
                entry = self.records.get(offset)
                if entry is None or entry.state is not RecordState.AVAILABLE:
                    continue
                entry = self._own(offset)
                if entry.delivery_count >= delivery_limit:
                    entry.state = RecordState.ARCHIVED
                    continue
                entry.state, entry.member_id = RecordState.ACQUIRED, member_id
                entry.delivery_count += 1
                entry.lock_deadline = now + lock_ms
                self._note_lock(entry.lock_deadline)
                count += 1
                if not cut and runs and runs[-1][1] == offset - 1 and runs[-1][2] == entry.delivery_count:
                    runs[-1] = (runs[-1][0], offset, entry.delivery_count)
                else:
                    runs.append((offset, offset, entry.delivery_count))
                    cut = False
            if stopped_at is not None:
                break
        for offset in sorted(gaps):  # markers read and not stopped before: nothing to deliver there
            if offset >= self.end_offset and (stopped_at is None or offset < stopped_at):
                for gap in range(self.end_offset, offset + 1):
                    self.records[gap] = InFlight(RecordState.ARCHIVED)
                self.end_offset = offset + 1
        self._advance()
        return runs

    def in_flight_records(self):
        """(offset, state) of each record from the start offset to the end offset, in offset
        order; a state has `state`, `delivery_count`, `member_id` and `lock_deadline`."""
        return iter(sorted(self.records.items()))

    def in_flight(self) -> int:
        """Records between the start and end offsets: what group.share.partition.max.record.locks bounds."""
        return self.end_offset - self.start_offset

    def _window_open(self, max_in_flight: int | None) -> bool:
        return max_in_flight is None or self.in_flight() < max_in_flight

    # --- acknowledging --------------------------------------------------------------------------

    def acknowledge(self, member_id: str, first: int, last: int, types: list[int], delivery_limit: int,
                    renew_until: int | None = None) -> ErrorCode:
        """One acknowledgement batch: one type for the whole range, or one per offset.
        INVALID_RECORD_STATE when a record is not acquired by this member; nothing changes then.
        RENEW keeps a record acquired with its lock running to `renew_until` (None: RENEW is not
        allowed in this request, INVALID_REQUEST)."""
        if last < first or not types or (len(types) != 1 and len(types) != last - first + 1):
            return ErrorCode.INVALID_REQUEST
        try:
            kinds = [AcknowledgeType(t) for t in types]
        except ValueError:
            return ErrorCode.INVALID_REQUEST
        if renew_until is None and AcknowledgeType.RENEW in kinds:
            return ErrorCode.INVALID_REQUEST
        single = kinds[0] if len(kinds) == 1 else None
        records = self.records
        for i, offset in enumerate(range(first, last + 1)):  # all or nothing: check every record first
            kind = single if single is not None else kinds[i]
            if kind is AcknowledgeType.GAP:
                continue
            entry = records.get(offset)
            if entry is None or entry.state is not RecordState.ACQUIRED or entry.member_id != member_id:
                return ErrorCode.INVALID_RECORD_STATE
        owned = self._owned
        for i, offset in enumerate(range(first, last + 1)):
            entry = records.get(offset)
            if entry is None:
                continue  # a gap before the start, or never fetched
            kind = single if single is not None else kinds[i]
            if kind is AcknowledgeType.RENEW:
                entry = self._own(offset)
                entry.lock_deadline = renew_until
                self._note_lock(renew_until)
                continue
            if kind is AcknowledgeType.ACCEPT:
                state = RecordState.ACKNOWLEDGED
            elif kind is AcknowledgeType.RELEASE:
                state = RecordState.ARCHIVED if entry.delivery_count >= delivery_limit else RecordState.AVAILABLE
                self._available_from = min(self._available_from, offset)
            else:  # GAP, REJECT
                state = RecordState.ARCHIVED
            # A new entry (nobody holds it, no lock) rather than the old one changed: a fork's
            # original keeps its own, and nothing is copied first.
            records[offset] = InFlight(state, entry.delivery_count)
            if owned is not None:
                owned.add(offset)
        self._advance()
        return ErrorCode.NONE

    def release_member(self, member_id: str, delivery_limit: int) -> bool:
        """A member left: its acquired records become available again. Whether any did."""
        released = [o for o, e in self.records.items() if e.state is RecordState.ACQUIRED and e.member_id == member_id]
        self._release(released, delivery_limit)
        return bool(released)

    def expire_locks(self, now: int, delivery_limit: int) -> bool:
        """Acquisition locks that ran out: their records are available again (or archived at the
        delivery limit). Whether any did."""
        if self._earliest_lock is None or self._earliest_lock > now:
            return False  # no lock can have run out yet: no scan
        expired = [o for o, e in self.records.items() if e.state is RecordState.ACQUIRED
                   and e.lock_deadline is not None and e.lock_deadline <= now]
        self._release(expired, delivery_limit)
        self._earliest_lock = min((e.lock_deadline for e in self.records.values()
                                   if e.state is RecordState.ACQUIRED and e.lock_deadline is not None), default=None)
        return bool(expired)

    def _release(self, offsets: list[int], delivery_limit: int) -> None:
        """Acquired records are available again, or archived at the delivery limit."""
        for offset in offsets:
            entry = self._own(offset)
            entry.state = RecordState.ARCHIVED if entry.delivery_count >= delivery_limit else RecordState.AVAILABLE
            entry.member_id = entry.lock_deadline = None
            self._available_from = min(self._available_from, offset)
        self._advance()

    def _note_lock(self, deadline: int) -> None:
        if self._earliest_lock is None or deadline < self._earliest_lock:
            self._earliest_lock = deadline

    def lag(self, high_watermark: int) -> int:
        """Records from the start offset to `high_watermark` the group is not done with (KIP-1226:
        the log's records past the start offset less those acknowledged or archived)."""
        done = sum(1 for offset, e in self.records.items() if offset < high_watermark
                   and e.state in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED))
        return max(high_watermark - self.start_offset - done, 0)

    def next_lock_deadline(self) -> int | None:
        """When the earliest lock may run out: never later than it (acknowledged records leave
        the bound behind until the next expiry scan makes it exact), None with nothing held."""
        return self._earliest_lock

    # --- durable state --------------------------------------------------------------------------

    def snapshot(self) -> tuple[int, list[tuple[int, int, int, int]]]:
        """(start offset, state batches): runs of (first, last, delivery state, delivery count)
        as Kafka's ShareSnapshot writes them. Acquired records are written as AVAILABLE: after a
        restart nobody holds them."""
        batches: list[tuple[int, int, int, int]] = []
        first = last = state = count = None
        acquired, available = RecordState.ACQUIRED, int(RecordState.AVAILABLE)
        for offset, entry in self.records.items():  # in offset order: entries are only ever added at the end
            entry_state = available if entry.state is acquired else int(entry.state)
            if offset == last + 1 if last is not None else False:
                if entry_state == state and entry.delivery_count == count:
                    last = offset
                    continue
            if first is not None:
                batches.append((first, last, state, count))
            first = last = offset
            state, count = entry_state, entry.delivery_count
        if first is not None:
            batches.append((first, last, state, count))
        return self.start_offset, batches

    @classmethod
    def restore(cls, start_offset: int, batches: list[tuple[int, int, int, int]]) -> "SharePartition":
        partition = cls(start_offset)
        for first, last, state, count in sorted(batches):  # entries go in in offset order (snapshot relies on it)
            for offset in range(max(first, start_offset), last + 1):
                partition.records[offset] = InFlight(RecordState(state), count)
            partition.end_offset = max(partition.end_offset, last + 1)
        partition._advance()
        return partition

    def _move_start(self, offset: int) -> None:
        for gone in [o for o in self.records if o < offset]:
            del self.records[gone]
        self.start_offset = offset
        self.end_offset = max(self.end_offset, offset)

    def _advance(self) -> None:
        """Move the start offset past the records done with (acknowledged or archived)."""
        offset = self.start_offset
        while offset < self.end_offset:
            entry = self.records.get(offset)
            if entry is None or entry.state not in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED):
                break
            del self.records[offset]
            offset += 1
        self.start_offset = offset
