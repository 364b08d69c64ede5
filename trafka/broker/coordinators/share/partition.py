"""One partition as one share group consumes it: Kafka's SharePartition (KIP-932).

Records from the share-partition start offset (SPSO) on are in flight, each in one state:

    AVAILABLE --acquire--> ACQUIRED --ACCEPT--> ACKNOWLEDGED
        ^                     |  --REJECT--> ARCHIVED
        +-- RELEASE / lock expiry --+   (ARCHIVED instead when the delivery count limit is reached)

Offsets at or past the share-partition end offset (the next offset never yet acquired) are
AVAILABLE without an entry. An acquisition hands a member a record for
`share.record.lock.duration.ms`, raises its delivery count, and archives it instead once the
count reached `group.share.delivery.count.limit`. ACKNOWLEDGED and ARCHIVED records at the
start are dropped and the start offset moves past them, so what is in flight stays small.

As Kafka keeps them, records in flight are batches (`InFlightBatch`: the offsets of a log batch
acquired together) with one state for the whole batch, and a state per record only in a batch
that an acknowledgement, a release or an expiry covered in part; so acquiring, acknowledging,
expiring and writing a snapshot cost the batches they touch, not every offset.

Pure state, no I/O: the share coordinator (coordinator.py) reads batches from the log, asks
`acquire`, applies acknowledgements, expires locks, and writes `snapshot()` to
`__share_group_state` (formats.py) when the durable part changed.
"""

from __future__ import annotations

import enum
from bisect import bisect_right
from dataclasses import dataclass
from itertools import groupby
from operator import attrgetter
from typing import Iterable, Iterator, NamedTuple

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


class InFlightState(NamedTuple):
    """One record's state, or a whole batch's while all its records share one (Kafka's
    InFlightState). Never changed: a change is a new one."""

    state: RecordState
    delivery_count: int = 0
    member_id: str | None = None
    lock_deadline: int | None = None

    def released(self, delivery_limit: int) -> "InFlightState":
        """Nobody holds it: available again, or archived once delivered `delivery_limit` times."""
        return InFlightState(RecordState.ARCHIVED if self.delivery_count >= delivery_limit else RecordState.AVAILABLE,
                             self.delivery_count)


_DONE = (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)
_NEW = InFlightState(RecordState.AVAILABLE)
_GAP = InFlightState(RecordState.ARCHIVED)


class InFlightBatch:
    """Offsets `first`..`last` in flight (Kafka's InFlightBatch): one `state` for all of them, or,
    once an acknowledgement, a release or an expiry covered only part of them, one state per
    offset (`offsets`, Kafka's offset state map; `state` is None then). Never changed once made:
    a change puts a new batch in its place, so a fork shares its original's batches."""

    __slots__ = ("first", "last", "state", "offsets")

    def __init__(self, first: int, last: int, state: InFlightState | None, offsets: list[InFlightState] | None = None):
        self.first, self.last, self.state, self.offsets = first, last, state, offsets

    def states(self) -> list[InFlightState]:
        """A new list of the state of each offset."""
        return [self.state] * (self.last - self.first + 1) if self.offsets is None else list(self.offsets)

    def runs(self, first: int, last: int) -> Iterator[tuple[int, int, InFlightState]]:
        """(first, last, state) of each run of offsets sharing one state, within first..last."""
        if self.offsets is None:
            yield first, last, self.state
            return
        offset = first
        for state, same in groupby(self.offsets[first - self.first:last - self.first + 1]):
            count = sum(1 for _ in same)
            yield offset, offset + count - 1, state
            offset += count


def _batch(first: int, states: list[InFlightState]) -> InFlightBatch:
    """The batch of `states` from `first`: one state for all when they are all the same."""
    last = first + len(states) - 1
    if states.count(states[0]) == len(states):
        return InFlightBatch(first, last, states[0])
    return InFlightBatch(first, last, None, states)


_FIRST = attrgetter("first")


class _Acquisition:
    """One acquire call as it goes: the runs handed out, how many records, where it stopped."""

    def __init__(self, member_id: str, deadline: int, delivery_limit: int, limits: AcquireLimits):
        self.member_id, self.deadline, self.delivery_limit = member_id, deadline, delivery_limit
        self.per_record, self.max_records = limits.mode is AcquireMode.RECORD_LIMIT, limits.max_records
        self.runs: list[tuple[int, int, int]] = []
        self.count = 0
        self.cut = False  # the next record begins a new run (batch_optimized, batch_size reached)
        self.stopped_at: int | None = None

    def take(self, first: int, last: int, state: InFlightState) -> list[tuple[int, int, InFlightState]]:
        """Offsets `first`..`last`, all in `state`, acquired if AVAILABLE (archived at the delivery
        limit), until `max_records` stops a record_limit acquisition: the (first, last, new
        state) pieces it changed."""
        if self.per_record and self.count >= self.max_records:
            self.stopped_at = first
            return []
        if state.state is not RecordState.AVAILABLE:
            return []
        if state.delivery_count >= self.delivery_limit:
            return [(first, last, InFlightState(RecordState.ARCHIVED, state.delivery_count))]
        upto = min(last, first + self.max_records - self.count - 1) if self.per_record else last
        delivered = state.delivery_count + 1
        runs = self.runs
        if not self.cut and runs and runs[-1][1] == first - 1 and runs[-1][2] == delivered:
            runs[-1] = (runs[-1][0], upto, delivered)
        else:
            runs.append((first, upto, delivered))
            self.cut = False
        self.count += upto - first + 1
        acquired = InFlightState(RecordState.ACQUIRED, delivered, self.member_id, self.deadline)
        if upto < last:
            self.stopped_at = upto + 1
        return [(first, upto, acquired)]


class SharePartition:
    def __init__(self, start_offset: int):
        self.start_offset = start_offset  # SPSO: below it, every record is done with
        self.end_offset = start_offset  # the next offset never acquired
        # Kafka's cachedState: the batches in flight in offset order, from the start offset to
        # the end offset without a hole.
        self._batches: list[InFlightBatch] = []
        self._earliest_lock: int | None = None  # never later than the earliest lock deadline
        # No record below it is AVAILABLE (records become available again only by a release or
        # an expired lock, which move it back), so `acquirable` need not rescan the window of
        # acquired records at every fetch.
        self._available_from = start_offset

    def fork(self) -> "SharePartition":
        """A copy to change and install, or drop, in its place (the coordinator writes it first).
        A change never alters a batch but puts a new one in the list, so a fork costs one copy
        of the list of batches."""
        twin = SharePartition.__new__(SharePartition)
        twin.start_offset, twin.end_offset = self.start_offset, self.end_offset
        twin._batches, twin._earliest_lock = list(self._batches), self._earliest_lock
        twin._available_from = self._available_from
        return twin

    def installed(self) -> "SharePartition":
        """This fork replaces its original, which is dropped."""
        return self

    def _index(self, offset: int) -> int:
        """The position of the batch holding `offset` (start offset <= offset < end offset)."""
        return bisect_right(self._batches, offset, key=_FIRST) - 1

    def in_flight_records(self) -> Iterator[tuple[int, InFlightState]]:
        """(offset, state) of each record from the start offset to the end offset, in offset order."""
        for batch in self._batches:
            if batch.offsets is None:
                state = batch.state
                for offset in range(batch.first, batch.last + 1):
                    yield offset, state
            else:
                yield from zip(range(batch.first, batch.last + 1), batch.offsets)

    # --- acquiring ----------------------------------------------------------------------------

    def acquirable(self, log_start: int, log_end: int, max_in_flight: int | None = None) -> int | None:
        """The first offset that could be acquired now, or None. Past the share-partition end
        offset only while fewer than `max_in_flight` records are in flight
        (group.share.partition.max.record.locks)."""
        if self.start_offset < log_start:
            self._move_start(log_start)
        offset = max(self.start_offset, self._available_from)
        if offset < self.end_offset:
            batches = self._batches
            for i in range(self._index(offset), len(batches)):
                batch = batches[i]
                if batch.offsets is None:
                    if batch.state.state is RecordState.AVAILABLE:
                        self._available_from = max(batch.first, offset)
                        return self._available_from
                    continue
                for first, last, state in batch.runs(max(batch.first, offset), batch.last):
                    if state.state is RecordState.AVAILABLE:
                        self._available_from = first
                        return first
        self._available_from = self.end_offset
        if self.end_offset >= log_end or not self._window_open(max_in_flight):
            return None
        return self.end_offset

    def acquire(self, batches: Iterable[range], member_id: str, now: int, lock_ms: int, delivery_limit: int,
                limits: AcquireLimits, gaps: list[int] = ()) -> list[tuple[int, int, int]]:
        """Acquire for `member_id` the AVAILABLE records of `batches` (the offset spans of the
        record batches read from the log, in order; an iterator is read only as far as the
        acquisition goes) within `limits`; (first, last, delivery count) runs. `gaps` are
        offsets read that hold no record to deliver (transaction markers): archived (`gaps` is
        read after `batches`).

        BATCH_OPTIMIZED takes whole batches and stops after the batch that reached
        `max_records`; RECORD_LIMIT never takes more than `max_records` (KIP-1206). Either way
        no batch past the end offset is begun once `max_in_flight` records are in flight."""
        taking = _Acquisition(member_id, now + lock_ms, delivery_limit, limits)
        for span in batches:
            if taking.count >= limits.max_records or (span.stop > self.end_offset and not self._window_open(limits.max_in_flight)):
                taking.stopped_at = span.start
                break
            # In batch_optimized mode a run holding batch_size records ends at a batch boundary.
            runs = taking.runs
            taking.cut = not taking.per_record and bool(runs) and 0 < limits.batch_size <= runs[-1][1] - runs[-1][0] + 1
            first = max(span.start, self.start_offset)
            if first < self.end_offset:
                self._acquire_in_flight(taking, first, min(span.stop, self.end_offset) - 1)
            if taking.stopped_at is None and span.stop > self.end_offset:
                self._acquire_new(taking, max(span.start, self.end_offset), span.stop - 1)
            if taking.stopped_at is not None:
                break
        stopped_at = taking.stopped_at
        # Markers read and not stopped before: nothing to deliver there.
        marked = [offset for offset in gaps if offset >= self.end_offset and (stopped_at is None or offset < stopped_at)]
        if marked:
            self._batches.append(InFlightBatch(self.end_offset, max(marked), _GAP))
            self.end_offset = max(marked) + 1
        if taking.count:
            self._note_lock(now + lock_ms)
        self._advance()
        return taking.runs

    def _acquire_in_flight(self, taking: _Acquisition, first: int, last: int) -> None:
        """Acquire what is AVAILABLE of `first`..`last`, offsets already in flight."""
        batches = self._batches
        i = self._index(first)
        while first <= last and taking.stopped_at is None:
            batch = batches[i]
            upto = min(last, batch.last)
            if batch.offsets is None:
                pieces = taking.take(first, upto, batch.state)
            else:
                pieces = []
                for run_first, run_last, state in batch.runs(first, upto):
                    if taking.stopped_at is None:
                        pieces.extend(taking.take(run_first, run_last, state))
            if pieces:  # else nothing to take here: the batch stays as it is
                batches[i] = self._changed(batch, pieces)
            first, i = upto + 1, i + 1

    @staticmethod
    def _changed(batch: InFlightBatch, pieces: list[tuple[int, int, InFlightState]]) -> InFlightBatch:
        """`batch` with the (first, last, state) pieces in place of what they cover."""
        if len(pieces) == 1 and pieces[0][0] == batch.first and pieces[0][1] == batch.last:
            return InFlightBatch(batch.first, batch.last, pieces[0][2])
        states = batch.states()
        for first, last, state in pieces:
            states[first - batch.first:last - batch.first + 1] = [state] * (last - first + 1)
        return _batch(batch.first, states)

    def _acquire_new(self, taking: _Acquisition, first: int, last: int) -> None:
        """Acquire `first`..`last`, offsets at or past the end offset: a new batch in flight (and
        one of archived offsets before it when the log has no record there)."""
        pieces = taking.take(first, last, _NEW)
        if not pieces:
            return  # stopped before it
        if first > self.end_offset:  # no record there (compacted, control)
            self._batches.append(InFlightBatch(self.end_offset, first - 1, _GAP))
        [(_, upto, state)] = pieces
        self._batches.append(InFlightBatch(first, upto, state))
        self.end_offset = upto + 1

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
        if not self._held(member_id, first, last, single, kinds):  # all or nothing: check every record first
            return ErrorCode.INVALID_RECORD_STATE
        low, high = max(first, self.start_offset), min(last, self.end_offset - 1)
        batches = self._batches
        i = self._index(low) if low <= high else len(batches)
        while i < len(batches) and batches[i].first <= high:
            batch = batches[i]
            a, b = max(low, batch.first), min(high, batch.last)
            kind = single if single is not None else kinds[a - first]
            if batch.offsets is None and (single is not None or kinds[a - first:b - first + 1].count(kind) == b - a + 1):
                batches[i] = self._changed(batch, [(a, b, self._acknowledged(batch.state, kind, a, delivery_limit, renew_until))])
            else:
                states = batch.states()
                for offset in range(a, b + 1):
                    kind = single if single is not None else kinds[offset - first]
                    states[offset - batch.first] = self._acknowledged(states[offset - batch.first], kind, offset,
                                                                      delivery_limit, renew_until)
                batches[i] = _batch(batch.first, states)
            i += 1
        self._advance()
        return ErrorCode.NONE

    def _held(self, member_id: str, first: int, last: int, single: AcknowledgeType | None,
              kinds: list[AcknowledgeType]) -> bool:
        """Whether every record of `first`..`last` acknowledged other than as a GAP is in flight
        and acquired by `member_id` (`single`: the one type of them all, else `kinds` per offset)."""
        if single is AcknowledgeType.GAP:
            return True
        checked = range(first, last + 1) if single is not None else \
            [offset for offset, kind in zip(range(first, last + 1), kinds) if kind is not AcknowledgeType.GAP]
        if not checked:
            return True
        if checked[0] < self.start_offset or checked[-1] >= self.end_offset:
            return False
        batches = self._batches
        i = self._index(checked[0])
        while i < len(batches) and batches[i].first <= checked[-1]:
            batch = batches[i]
            for run_first, run_last, state in batch.runs(max(checked[0], batch.first), min(checked[-1], batch.last)):
                if state.state is RecordState.ACQUIRED and state.member_id == member_id:
                    continue
                if single is not None or any(kinds[offset - first] is not AcknowledgeType.GAP
                                             for offset in range(run_first, run_last + 1)):
                    return False
            i += 1
        return True

    def _acknowledged(self, state: InFlightState, kind: AcknowledgeType, offset: int, delivery_limit: int,
                      renew_until: int | None) -> InFlightState:
        """A record's state after its acknowledgement (from `offset` on, for a run)."""
        if kind is AcknowledgeType.RENEW:
            self._note_lock(renew_until)
            return state._replace(lock_deadline=renew_until)
        if kind is AcknowledgeType.ACCEPT:
            return InFlightState(RecordState.ACKNOWLEDGED, state.delivery_count)
        if kind is AcknowledgeType.RELEASE:
            self._available_from = min(self._available_from, offset)
            return state.released(delivery_limit)
        return InFlightState(RecordState.ARCHIVED, state.delivery_count)  # GAP, REJECT

    def release_member(self, member_id: str, delivery_limit: int) -> bool:
        """A member left: its acquired records become available again. Whether any did."""
        return self._release(lambda state: state.member_id == member_id, delivery_limit)

    def expire_locks(self, now: int, delivery_limit: int) -> bool:
        """Acquisition locks that ran out: their records are available again (or archived at the
        delivery limit). Whether any did."""
        if self._earliest_lock is None or self._earliest_lock > now:
            return False  # no lock can have run out yet: no scan
        expired = self._release(lambda state: state.lock_deadline is not None and state.lock_deadline <= now, delivery_limit)
        self._earliest_lock = min((state.lock_deadline for batch in self._batches
                                   for state in ((batch.state,) if batch.offsets is None else batch.offsets)
                                   if state.state is RecordState.ACQUIRED and state.lock_deadline is not None), default=None)
        return expired

    def _release(self, held, delivery_limit: int) -> bool:
        """The acquired records whose state `held` picks are available again, or archived at the
        delivery limit. Whether there were any."""
        acquired, released = RecordState.ACQUIRED, False
        batches = self._batches
        for i, batch in enumerate(batches):
            if batch.offsets is None:
                if batch.state.state is acquired and held(batch.state):
                    batches[i] = InFlightBatch(batch.first, batch.last, batch.state.released(delivery_limit))
                else:
                    continue
            elif any(state.state is acquired and held(state) for state in batch.offsets):
                batches[i] = _batch(batch.first, [state.released(delivery_limit) if state.state is acquired and held(state)
                                                  else state for state in batch.offsets])
            else:
                continue
            released = True
            self._available_from = min(self._available_from, batch.first)
        self._advance()
        return released

    def _note_lock(self, deadline: int) -> None:
        if self._earliest_lock is None or deadline < self._earliest_lock:
            self._earliest_lock = deadline

    def lag(self, high_watermark: int) -> int:
        """Records from the start offset to `high_watermark` the group is not done with (KIP-1226:
        the log's records past the start offset less those acknowledged or archived)."""
        done = 0
        for batch in self._batches:
            if batch.first >= high_watermark:
                break
            if batch.offsets is None:
                if batch.state.state in _DONE:
                    done += min(batch.last, high_watermark - 1) - batch.first + 1
            else:
                done += sum(1 for state in batch.offsets[:high_watermark - batch.first] if state.state in _DONE)
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
        written: list[tuple[int, int, int, int]] = []
        acquired, available = RecordState.ACQUIRED, int(RecordState.AVAILABLE)
        for batch in self._batches:
            runs = ((batch.first, batch.last, batch.state),) if batch.offsets is None else batch.runs(batch.first, batch.last)
            for first, last, entry in runs:
                state = available if entry.state is acquired else int(entry.state)
                if written and written[-1][1] == first - 1 and written[-1][2] == state and written[-1][3] == entry.delivery_count:
                    written[-1] = (written[-1][0], last, state, entry.delivery_count)
                else:
                    written.append((first, last, state, entry.delivery_count))
        return self.start_offset, written

    @classmethod
    def restore(cls, start_offset: int, batches: list[tuple[int, int, int, int]]) -> "SharePartition":
        """The share-partition a snapshot describes. Offsets between its state batches, which
        Kafka's snapshots do not leave, are AVAILABLE, never delivered."""
        partition = cls(start_offset)
        restored = partition._batches
        for first, last, state, count in sorted(batches):
            first = max(first, partition.end_offset)
            if last < first:
                continue
            if first > partition.end_offset:
                restored.append(InFlightBatch(partition.end_offset, first - 1, _NEW))
            restored.append(InFlightBatch(first, last, InFlightState(RecordState(state), count)))
            partition.end_offset = last + 1
        partition._advance()
        return partition

    def _move_start(self, offset: int) -> None:
        batches = self._batches
        if offset >= self.end_offset:
            batches.clear()
        else:
            i = self._index(offset)
            del batches[:i]
            batch = batches[0]
            if batch.first < offset:
                batches[0] = (InFlightBatch(offset, batch.last, batch.state) if batch.offsets is None
                              else _batch(offset, batch.offsets[offset - batch.first:]))
        self.start_offset = offset
        self.end_offset = max(self.end_offset, offset)

    def _advance(self) -> None:
        """Move the start offset past the records done with (acknowledged or archived)."""
        batches = self._batches
        start, done = self.end_offset, 0
        for batch in batches:
            if batch.offsets is None:
                if batch.state.state in _DONE:
                    done += 1
                    continue
                start = batch.first
            else:
                left = next((i for i, state in enumerate(batch.offsets) if state.state not in _DONE), None)
                if left is None:
                    done += 1
                    continue
                start = batch.first + left
                if left:
                    batches[done] = _batch(start, batch.offsets[left:])
            break
        if done:
            del batches[:done]
        self.start_offset = start
