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
    for offset in range(sp.start_offset, sp.end_offset):
        entry = sp.records.get(offset)
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
        for member, member_held in held.items():
            for offset in member_held:
                entry = sp.records[offset]
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
    assert sp.start_offset == end and not sp.records


def test_a_fork_changes_nothing_of_its_original_until_installed():
    """What the coordinator relies on to write first: acknowledgements, releases and expiries on
    a fork leave the original exactly as it was (a failed write drops the fork)."""
    sp = SharePartition(0)
    sp.acquire(batches(10, 10), "a", 0, LOCK_MS, 2, AcquireLimits(100))
    before = (sp.start_offset, sp.end_offset, {o: (e.state, e.member_id, e.delivery_count, e.lock_deadline)
                                               for o, e in sp.records.items()})
    work = sp.fork()
    assert work.acknowledge("a", 0, 9, [AcknowledgeType.ACCEPT], 2) == ErrorCode.NONE
    assert work.acknowledge("a", 10, 19, [AcknowledgeType.RELEASE], 2) == ErrorCode.NONE
    assert work.release_member("a", 2)
    assert work.start_offset == 10 and sp.start_offset == 0
    assert (sp.start_offset, sp.end_offset, {o: (e.state, e.member_id, e.delivery_count, e.lock_deadline)
                                             for o, e in sp.records.items()}) == before
    installed = work.installed()
    assert installed.acquire(batches(10, 10), "b", 0, LOCK_MS, 2, AcquireLimits(5, mode=AcquireMode.RECORD_LIMIT)) == [(10, 14, 2)]
    assert all(e.state is RecordState.ACQUIRED for e in sp.records.values())  # the dropped original, untouched
