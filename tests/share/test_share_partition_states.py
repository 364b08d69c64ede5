"""SharePartition's state machine on its own (Kafka's SharePartition), no broker, no clock but
the numbers passed in: the KIP-1206 record limits, the in-flight cap, and seeded random
schedules of acquisitions, acknowledgements, lock expiries and restarts from the written
snapshot, with invariants checked after every step."""

from __future__ import annotations

import random

import pytest

from trafka.broker.coordinators.share.partition import AcknowledgeType, AcquireLimits, AcquireMode, RecordState, SharePartition
from trafka.wire.errors import ErrorCode

LOCK_MS = 1000


def batches(count: int, size: int, start: int = 0) -> list[range]:
    return [range(start + i * size, start + (i + 1) * size) for i in range(count)]


def acquired_count(runs) -> int:
    return sum(last - first + 1 for first, last, _ in runs)


def test_batch_optimized_takes_whole_batches_and_stops_after_the_one_reaching_max_records():
    sp = SharePartition(0)
    log = batches(100, 20)  # 2,000 records in batches of 20
    runs = sp.acquire(log, "a", 0, LOCK_MS, 5, AcquireLimits(50, batch_size=50))
    assert acquired_count(runs) == 60  # three whole batches, as Kafka's soft limit gives
    assert runs[0][0] == 0 and runs[-1][1] == 59
    runs = sp.acquire(log, "b", 0, LOCK_MS, 5, AcquireLimits(50, batch_size=50))
    assert (runs[0][0], runs[-1][1], acquired_count(runs)) == (60, 119, 60)


def test_batch_optimized_runs_end_at_a_batch_boundary_once_batch_size_long():
    sp = SharePartition(0)
    runs = sp.acquire(batches(10, 20), "a", 0, LOCK_MS, 5, AcquireLimits(200, batch_size=50))
    assert [(first, last) for first, last, _ in runs] == [(0, 59), (60, 119), (120, 179), (180, 199)]


def test_record_limit_never_takes_more_than_max_records():
    sp = SharePartition(0)
    log = batches(100, 20)
    runs = sp.acquire(log, "a", 0, LOCK_MS, 5, AcquireLimits(50, batch_size=50, mode=AcquireMode.RECORD_LIMIT))
    assert runs == [(0, 49, 1)]
    runs = sp.acquire(log, "b", 0, LOCK_MS, 5, AcquireLimits(7, mode=AcquireMode.RECORD_LIMIT))
    assert runs == [(50, 56, 1)]
    assert sp.acquirable(0, 2000) == 57


def test_redelivered_records_count_against_max_records_too():
    sp = SharePartition(0)
    log = batches(10, 10)
    sp.acquire(log, "a", 0, LOCK_MS, 5, AcquireLimits(100))
    assert sp.expire_locks(LOCK_MS, 5)
    # Redelivered records (delivery count 2) beside new ones (1) still stop at the limit.
    runs = sp.acquire(log + batches(5, 10, start=100), "b", LOCK_MS, LOCK_MS, 5,
                      AcquireLimits(30, mode=AcquireMode.RECORD_LIMIT))
    assert runs == [(0, 29, 2)]


def test_no_new_records_are_acquired_past_the_in_flight_cap():
    sp = SharePartition(0)
    log = batches(50, 20)
    limits = AcquireLimits(500, max_in_flight=100)
    runs = sp.acquire(log, "a", 0, LOCK_MS, 5, limits)
    assert acquired_count(runs) == 100
    assert sp.acquirable(0, 1000, max_in_flight=100) is None
    assert sp.acquire(log, "b", 0, LOCK_MS, 5, limits) == []
    assert sp.acknowledge("a", 0, 19, [AcknowledgeType.ACCEPT], 5) == ErrorCode.NONE
    assert sp.acquirable(0, 1000, max_in_flight=100) == 100
    runs = sp.acquire(log, "b", 0, LOCK_MS, 5, limits)
    assert (runs[0][0], runs[-1][1]) == (100, 119)


def test_released_records_inside_the_window_are_acquired_whatever_the_cap():
    sp = SharePartition(0)
    log = batches(5, 20)
    sp.acquire(log, "a", 0, LOCK_MS, 5, AcquireLimits(100, max_in_flight=100))
    assert sp.acknowledge("a", 40, 59, [AcknowledgeType.RELEASE], 5) == ErrorCode.NONE
    assert sp.acquirable(0, 100, max_in_flight=100) == 40
    runs = sp.acquire(log, "b", 0, LOCK_MS, 5, AcquireLimits(100, max_in_flight=100))
    assert runs == [(40, 59, 2)]


def _written(sp: SharePartition) -> SharePartition:
    """A restart: the share-partition as its last written snapshot has it."""
    start, states = sp.snapshot()
    return SharePartition.restore(start, states)


def _first_acquirable(sp: SharePartition, log_end: int, cap: int) -> int | None:
    """What acquirable must answer, found by walking the whole window (no hint)."""
    records = dict(sp.in_flight_records())
    for offset in range(sp.start_offset, sp.end_offset):
        entry = records.get(offset)
        if entry is None or entry.state is RecordState.AVAILABLE:
            return offset
    return sp.end_offset if sp.end_offset < log_end and sp.in_flight() < cap else None


@pytest.mark.parametrize("seed", range(12))
def test_seeded_schedules_keep_every_share_partition_invariant(seed):
    """Members acquire (both modes, various limits), acknowledge (ACCEPT, RELEASE, REJECT), locks
    expire and the share-partition restarts from its snapshot, in a seeded random order. After
    every step: a record is held by at most one member; no record is delivered more often than
    the limit; an acknowledged or archived record is never delivered again; the start offset
    never goes back; at most max_in_flight + one batch are in flight; acquirable answers the
    first offset a walk of the whole window finds. At the end every record
    is done with."""
    rng = random.Random(seed)
    limit, cap, size = 3, 120, rng.choice([1, 7, 20])
    log = batches(60, size)
    end = log[-1].stop
    sp = SharePartition(0)
    now = 0
    held: dict[str, set[int]] = {m: set() for m in "abc"}
    deliveries: dict[int, int] = {}
    done: set[int] = set()
    last_start = 0
    for _ in range(400):
        step = rng.random()
        member = rng.choice("abc")
        if step < 0.45:
            mode = rng.choice(list(AcquireMode))
            limits = AcquireLimits(rng.choice([1, 5, 50, 500]), rng.choice([0, 10, 50]), mode, cap)
            runs = sp.acquire(log, member, now, LOCK_MS, limit, limits)
            got = {o for first, last, _ in runs for o in range(first, last + 1)}
            if mode is AcquireMode.RECORD_LIMIT:
                assert len(got) <= limits.max_records
            else:
                assert len(got) < limits.max_records + size
            for offset in got:
                assert offset not in done, f"seed {seed}: {offset} delivered after it was done with"
                assert all(offset not in h for h in held.values()), f"seed {seed}: {offset} held twice"
                deliveries[offset] = deliveries.get(offset, 0) + 1
                assert deliveries[offset] <= limit, f"seed {seed}: {offset} delivered {deliveries[offset]} times"
            held[member] |= got
        elif step < 0.8 and held[member]:
            offset = rng.choice(sorted(held[member]))
            kind = rng.choice([AcknowledgeType.ACCEPT, AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT])
            assert sp.acknowledge(member, offset, offset, [kind], limit) == ErrorCode.NONE
            held[member].discard(offset)
            if kind is not AcknowledgeType.RELEASE or deliveries[offset] >= limit:
                done.add(offset)
        elif step < 0.9:
            now += LOCK_MS
            sp.expire_locks(now, limit)
            for member_held in held.values():
                done |= {o for o in member_held if deliveries[o] >= limit}
                member_held.clear()
        else:
            sp = _written(sp)  # a restart: nothing held any more; counts as written
            for member_held in held.values():
                done |= {o for o in member_held if deliveries[o] >= limit}
                member_held.clear()
        assert sp.start_offset >= last_start
        last_start = sp.start_offset
        assert sp.acquirable(0, end, cap) == _first_acquirable(sp, end, cap), f"seed {seed}: acquirable missed one"
        assert sp.in_flight() <= cap + size
        records = dict(sp.in_flight_records())
        for member, member_held in held.items():
            for offset in member_held:
                entry = records[offset]
                assert entry.state is RecordState.ACQUIRED and entry.member_id == member
    # Drain: everything left is accepted by whoever gets it.
    for _ in range(10 * end):
        now += LOCK_MS
        sp.expire_locks(now, limit)
        runs = sp.acquire(log, "a", now, LOCK_MS, limit, AcquireLimits(500, 0, AcquireMode.BATCH_OPTIMIZED, cap))
        for first, last, _ in runs:
            for offset in range(first, last + 1):
                assert offset not in done
                deliveries[offset] = deliveries.get(offset, 0) + 1
                assert deliveries[offset] <= limit
            assert sp.acknowledge("a", first, last, [AcknowledgeType.ACCEPT], limit) == ErrorCode.NONE
        if sp.start_offset == end:
            break
    assert sp.start_offset == end and not list(sp.in_flight_records())


def test_a_fork_changes_nothing_of_its_original_until_installed():
    """What the coordinator relies on to write first: acknowledgements, releases and expiries on
    a fork leave the original exactly as it was (a failed write drops the fork)."""
    sp = SharePartition(0)
    sp.acquire(batches(10, 10), "a", 0, LOCK_MS, 2, AcquireLimits(100))
    before = (sp.start_offset, sp.end_offset, {o: (e.state, e.member_id, e.delivery_count, e.lock_deadline)
                                               for o, e in sp.in_flight_records()})
    work = sp.fork()
    assert work.acknowledge("a", 0, 9, [AcknowledgeType.ACCEPT], 2) == ErrorCode.NONE
    assert work.acknowledge("a", 10, 19, [AcknowledgeType.RELEASE], 2) == ErrorCode.NONE
    assert work.release_member("a", 2)
    assert work.start_offset == 10 and sp.start_offset == 0
    assert (sp.start_offset, sp.end_offset, {o: (e.state, e.member_id, e.delivery_count, e.lock_deadline)
                                             for o, e in sp.in_flight_records()}) == before
    installed = work.installed()
    assert installed.acquire(batches(10, 10), "b", 0, LOCK_MS, 2, AcquireLimits(5, mode=AcquireMode.RECORD_LIMIT)) == [(10, 14, 2)]
    assert all(e.state is RecordState.ACQUIRED for _, e in sp.in_flight_records())  # the dropped original, untouched


class PerOffsetModel:
    """What a share-partition must do, written the simplest way: one entry per offset from the
    start offset to the end offset, every operation a walk over its offsets. The seeded
    schedules below compare SharePartition (which keeps batches) with it after every step."""

    DONE = (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)

    def __init__(self, start: int):
        self.start = self.end = start
        self.records: dict[int, tuple] = {}  # offset -> (state, delivery count, member id, lock deadline)
        self.earliest: int | None = None  # next_lock_deadline: the earliest lock noted since the last expiry scan

    def copy(self) -> "PerOffsetModel":
        twin = PerOffsetModel(self.start)
        twin.end, twin.records, twin.earliest = self.end, dict(self.records), self.earliest
        return twin

    @classmethod
    def restore(cls, start: int, batches) -> "PerOffsetModel":
        model = cls(start)
        for first, last, state, count in batches:
            for offset in range(max(first, start), last + 1):
                model.records[offset] = (RecordState(state), count, None, None)
            model.end = max(model.end, last + 1)
        model.advance()
        return model

    def note(self, deadline: int) -> None:
        self.earliest = deadline if self.earliest is None else min(self.earliest, deadline)

    def advance(self) -> None:
        while self.start < self.end and self.records[self.start][0] in self.DONE:
            del self.records[self.start]
            self.start += 1

    def move_start(self, offset: int) -> None:
        self.records = {o: e for o, e in self.records.items() if o >= offset}
        self.start, self.end = offset, max(self.end, offset)

    def acquirable(self, log_start: int, log_end: int, cap: int) -> int | None:
        if self.start < log_start:
            self.move_start(log_start)
        for offset in range(self.start, self.end):
            if self.records[offset][0] is RecordState.AVAILABLE:
                return offset
        return self.end if self.end < log_end and self.end - self.start < cap else None

    def acquire(self, spans, member, now, lock_ms, limit, limits: AcquireLimits, gaps) -> list[tuple[int, int, int]]:
        runs: list[list[int]] = []
        count, stopped_at = 0, None
        per_record = limits.mode is AcquireMode.RECORD_LIMIT
        for span in spans:
            if count >= limits.max_records or (span.stop > self.end and self.end - self.start >= limits.max_in_flight):
                stopped_at = span.start
                break
            cut = not per_record and runs and 0 < limits.batch_size <= runs[-1][1] - runs[-1][0] + 1
            for offset in span:
                if per_record and count >= limits.max_records:
                    stopped_at = offset
                    break
                if offset < self.start:
                    continue
                while self.end <= offset:
                    self.records[self.end] = (RecordState.ARCHIVED if self.end < offset else RecordState.AVAILABLE, 0, None, None)
                    self.end += 1
                state, delivered, _, _ = self.records[offset]
                if state is not RecordState.AVAILABLE:
                    continue
                if delivered >= limit:
                    self.records[offset] = (RecordState.ARCHIVED, delivered, None, None)
                    continue
                self.records[offset] = (RecordState.ACQUIRED, delivered + 1, member, now + lock_ms)
                self.note(now + lock_ms)
                count += 1
                if not cut and runs and runs[-1][1] == offset - 1 and runs[-1][2] == delivered + 1:
                    runs[-1][1] = offset
                else:
                    runs.append([offset, offset, delivered + 1])
                    cut = False
            if stopped_at is not None:
                break
        for offset in sorted(gaps):
            if offset >= self.end and (stopped_at is None or offset < stopped_at):
                while self.end <= offset:
                    self.records[self.end] = (RecordState.ARCHIVED, 0, None, None)
                    self.end += 1
        self.advance()
        return [tuple(run) for run in runs]

    def acknowledge(self, member, first, last, types, limit, renew_until) -> ErrorCode:
        if last < first or not types or len(types) not in (1, last - first + 1):
            return ErrorCode.INVALID_REQUEST
        if any(t not in set(AcknowledgeType) for t in types) or (renew_until is None and AcknowledgeType.RENEW in types):
            return ErrorCode.INVALID_REQUEST
        kinds = {offset: AcknowledgeType(types[0] if len(types) == 1 else types[offset - first])
                 for offset in range(first, last + 1)}
        for offset, kind in kinds.items():
            entry = self.records.get(offset)
            if kind is not AcknowledgeType.GAP and (entry is None or entry[0] is not RecordState.ACQUIRED or entry[2] != member):
                return ErrorCode.INVALID_RECORD_STATE
        for offset, kind in kinds.items():
            if offset not in self.records:
                continue
            state, delivered, _, _ = self.records[offset]
            if kind is AcknowledgeType.RENEW:
                self.records[offset] = (state, delivered, member, renew_until)
                self.note(renew_until)
            elif kind is AcknowledgeType.ACCEPT:
                self.records[offset] = (RecordState.ACKNOWLEDGED, delivered, None, None)
            elif kind is AcknowledgeType.RELEASE:
                self.records[offset] = (RecordState.ARCHIVED if delivered >= limit else RecordState.AVAILABLE, delivered, None, None)
            else:
                self.records[offset] = (RecordState.ARCHIVED, delivered, None, None)
        self.advance()
        return ErrorCode.NONE

    def release(self, offsets, limit) -> bool:
        for offset in offsets:
            delivered = self.records[offset][1]
            self.records[offset] = (RecordState.ARCHIVED if delivered >= limit else RecordState.AVAILABLE, delivered, None, None)
        self.advance()
        return bool(offsets)

    def release_member(self, member, limit) -> bool:
        return self.release([o for o, e in self.records.items() if e[0] is RecordState.ACQUIRED and e[2] == member], limit)

    def expire_locks(self, now, limit) -> bool:
        if self.earliest is None or self.earliest > now:
            return False
        expired = self.release([o for o, e in self.records.items() if e[0] is RecordState.ACQUIRED and e[3] <= now], limit)
        self.earliest = min((e[3] for e in self.records.values() if e[0] is RecordState.ACQUIRED), default=None)
        return expired

    def lag(self, high_watermark: int) -> int:
        done = sum(1 for o, e in self.records.items() if o < high_watermark and e[0] in self.DONE)
        return max(high_watermark - self.start - done, 0)

    def snapshot(self):
        batches: list[list[int]] = []
        for offset in range(self.start, self.end):
            state, delivered = self.records[offset][:2]
            state = RecordState.AVAILABLE if state is RecordState.ACQUIRED else state
            if batches and batches[-1][1] == offset - 1 and batches[-1][2:] == [state, delivered]:
                batches[-1][1] = offset
            else:
                batches.append([offset, offset, state, delivered])
        return self.start, [tuple(b) for b in batches]


def _log(rng: random.Random, spans: int) -> tuple[list[range], set[int]]:
    """Record batches of mixed sizes, some offsets missing (compacted away), some transaction
    markers: (the data batches, the markers' offsets)."""
    data, markers, offset = [], set(), 0
    for _ in range(spans):
        roll = rng.random()
        if roll < 0.05:
            offset += rng.randint(1, 4)
        elif roll < 0.12:
            markers.add(offset)
            offset += 1
        else:
            size = rng.choice([1, 2, 5, 10, 25])
            data.append(range(offset, offset + size))
            offset += size
    return data, markers


def _same(sp: SharePartition, model: PerOffsetModel, seed: int, step: int, what: str) -> None:
    where = f"seed {seed} step {step} ({what})"
    assert (sp.start_offset, sp.end_offset) == (model.start, model.end), where
    assert [(o, (e.state, e.delivery_count, e.member_id, e.lock_deadline)) for o, e in sp.in_flight_records()] == \
        sorted(model.records.items()), where
    assert sp.snapshot() == model.snapshot(), where
    assert sp.next_lock_deadline() == model.earliest, where


@pytest.mark.parametrize("seed", range(40))
def test_seeded_schedules_that_split_batches_match_a_per_offset_model(seed):
    """Fetches of whole log batches (some read from inside a batch, past markers and missing
    offsets), then acknowledgements of any part of what a member holds, single types or one
    per offset (ACCEPT, RELEASE, REJECT, RENEW, GAP, and some that must be refused), members
    leaving, locks of different deadlines in one batch expiring, the log start moving past part
    of a batch, forks changed in part then installed or dropped, and restarts from the written
    snapshot, in a seeded order. After every step the share-partition answers as the per-offset
    model does: every record's state, delivery count, member and lock, the start and end
    offsets, the snapshot, the lag, the next lock deadline, and what each call returned."""
    rng = random.Random(seed)
    limit, cap = rng.choice([1, 2, 4]), rng.choice([30, 120, 10_000])
    data, markers = _log(rng, 120)
    written = len(data) // 4  # batches produced so far: the log end moves
    produced = data[written - 1].stop
    log_start, now = 0, 0
    sp, model = SharePartition(0), PerOffsetModel(0)

    def read(first: int):
        """A fetch from `first`: the log batches from the one holding it, a few of them."""
        spans = [s for s in data[:written] if s.stop > first]
        spans = spans[:rng.randint(1, 6)]
        top = spans[-1].stop if spans else first
        return spans, [m for m in markers if first <= m < top]

    def acknowledgement(member: str):
        """(first, last, types, renew_until): mostly part of what the member holds, sometimes more."""
        held = sorted(o for o, e in model.records.items() if e[0] is RecordState.ACQUIRED and e[2] == member)
        if held and rng.random() < 0.85:
            i = rng.randrange(len(held))
            j = i
            while j + 1 < len(held) and held[j + 1] == held[j] + 1 and rng.random() < 0.9:
                j += 1
            first, last = held[i], held[j]
        else:
            first = rng.randint(max(model.start - 3, 0), model.end + 2)
            last = first + rng.randint(0, 12)
        kinds = [AcknowledgeType.ACCEPT, AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT,
                 AcknowledgeType.RENEW, AcknowledgeType.GAP]
        if rng.random() < 0.6:
            types = [rng.choice(kinds)]
        else:
            types = [rng.choice(kinds) for _ in range(last - first + 1)]
        renew_until = now + rng.choice([LOCK_MS // 2, LOCK_MS, 3 * LOCK_MS]) if rng.random() < 0.9 else None
        return first, last, types, renew_until

    def change(work: SharePartition, twin: PerOffsetModel) -> None:
        """What the coordinator applies to a fork: acknowledgements, an expiry or a member leaving."""
        member, roll = rng.choice("abc"), rng.random()
        if roll < 0.6:
            for _ in range(rng.randint(1, 3)):
                first, last, types, renew_until = acknowledgement(member)
                assert work.acknowledge(member, first, last, types, limit, renew_until) == \
                    twin.acknowledge(member, first, last, types, limit, renew_until)
        elif roll < 0.8:
            assert work.expire_locks(now, limit) == twin.expire_locks(now, limit)
        else:
            assert work.release_member(member, limit) == twin.release_member(member, limit)

    for step in range(300):
        roll, member = rng.random(), rng.choice("abc")
        if roll < 0.35:
            what = "fetch"
            first = sp.acquirable(log_start, produced, cap)
            assert first == model.acquirable(log_start, produced, cap)
            if first is not None:
                spans, gaps = read(first)
                limits = AcquireLimits(rng.choice([1, 3, 7, 50, 500]), rng.choice([0, 5, 30]), rng.choice(list(AcquireMode)), cap)
                runs = sp.acquire(spans, member, now, LOCK_MS, limit, limits, gaps=gaps)
                assert runs == model.acquire(spans, member, now, LOCK_MS, limit, limits, gaps), f"seed {seed} step {step}"
        elif roll < 0.6:
            what = "acknowledge"
            first, last, types, renew_until = acknowledgement(member)
            assert sp.acknowledge(member, first, last, types, limit, renew_until) == \
                model.acknowledge(member, first, last, types, limit, renew_until), f"seed {seed} step {step}"
        elif roll < 0.7:
            what = "clock"
            now += rng.choice([LOCK_MS // 4, LOCK_MS // 2, LOCK_MS])
            assert sp.expire_locks(now, limit) == model.expire_locks(now, limit)
        elif roll < 0.75:
            what = "member leaves"
            assert sp.release_member(member, limit) == model.release_member(member, limit)
        elif roll < 0.87:
            what = "fork"
            work, twin = sp.fork(), model.copy()
            change(work, twin)
            if rng.random() < 0.7:
                sp, model = work.installed(), twin
            else:
                what = "fork dropped"  # the write failed: the original goes on as it was
                _same(work, twin, seed, step, "the dropped fork")
        elif roll < 0.92:
            what = "restart"
            sp = SharePartition.restore(*sp.snapshot())
            model = PerOffsetModel.restore(*model.snapshot())
        elif roll < 0.95:
            what = "log start"
            log_start = min(log_start + rng.randint(1, 15), produced)
        else:
            what = "produce"
            written = min(written + rng.randint(1, 8), len(data))
            produced = data[written - 1].stop
        _same(sp, model, seed, step, what)
        high_watermark = rng.randint(model.start, max(produced, model.end) + 1)
        assert sp.lag(high_watermark) == model.lag(high_watermark), f"seed {seed} step {step}"


def test_an_acknowledgement_reaching_below_the_start_offset_is_refused_unless_a_gap_there():
    sp = SharePartition(0)
    sp.acquire(batches(4, 10), "a", 0, LOCK_MS, 5, AcquireLimits(100))
    assert sp.acknowledge("a", 0, 9, [AcknowledgeType.ACCEPT], 5) == ErrorCode.NONE
    assert sp.start_offset == 10
    assert sp.acknowledge("a", 9, 15, [AcknowledgeType.ACCEPT], 5) == ErrorCode.INVALID_RECORD_STATE
    assert sp.acknowledge("a", 9, 11, [AcknowledgeType.GAP, AcknowledgeType.ACCEPT, AcknowledgeType.ACCEPT], 5) == ErrorCode.NONE
    assert sp.acknowledge("a", 38, 40, [AcknowledgeType.ACCEPT], 5) == ErrorCode.INVALID_RECORD_STATE  # 40: never fetched
    assert sp.snapshot() == (12, [(12, 39, RecordState.AVAILABLE, 1)])


def test_offsets_between_the_state_batches_of_a_snapshot_are_available():
    """Kafka's snapshots leave no hole between state batches; one that does is not stuck there
    (acquirable answered the hole and acquire skipped it)."""
    sp = SharePartition.restore(0, [(3, 4, RecordState.ACKNOWLEDGED, 1), (8, 9, RecordState.AVAILABLE, 2)])
    assert sp.acquirable(0, 20) == 0
    assert sp.acquire([range(0, 10)], "a", 0, LOCK_MS, 5, AcquireLimits(100)) == [(0, 2, 1), (5, 7, 1), (8, 9, 3)]
