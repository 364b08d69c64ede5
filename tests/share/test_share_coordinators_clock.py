"""The share coordinator and the share side of the group coordinator in process, over a real
LogManager on a manual clock: time moves, nothing sleeps. Write-then-apply under injected append
failures, member expiry, the acquisition lock timer, and seeded schedules of acquisitions,
acknowledgements, lock expiries and restarts with invariants after every step."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from testkit.coordinators import TOPIC, reopening_broker
from trafka.broker.coordinators.group.coordinator import RETRY_MS as GROUP_RETRY_MS
from trafka.broker.coordinators.share.coordinator import RETRY_MS
from trafka.broker.coordinators.share.formats import SharePartitionKey
from trafka.broker.coordinators.share.group import ShareHeartbeat
from trafka.broker.coordinators.share.partition import AcknowledgeType, AcquireLimits, RecordState
from trafka.storage.errors import StorageWriteFailed
from trafka.wire.errors import ErrorCode as E

LOCK_MS, SESSION_MS, LIMIT = 2000, 45000, 3
SETTINGS = {"group.share.record.lock.duration.ms": LOCK_MS, "group.share.delivery.count.limit": LIMIT,
            "share.coordinator.state.topic.num.partitions": 3}


class Failing:
    """An append guard: while `on`, every append of the internal topic fails as a full disk."""

    def __init__(self):
        self.on = False

    def __call__(self, topic, partition):
        if self.on:
            raise StorageWriteFailed(f"{topic}-{partition}: no space left on device (injected)")


@pytest.fixture
def open_pair(tmp_path, clock):
    """`open_pair()` starts (or restarts) a group coordinator and a share coordinator over the
    same data dir, each internal topic guarded by one `Failing`."""
    guard = Failing()
    with reopening_broker(tmp_path, clock, partitions=1) as reopen:
        def start():
            broker = reopen(**SETTINGS)
            groups, share = broker.group_coordinator, broker.share_coordinator
            for topic in (groups.offsets_topic, share.state_topic):
                topic.append_guard = guard
            return SimpleNamespace(groups=groups, share=share, logs=broker.logs, guard=guard)
        yield start


def heartbeat(coordinator, member, epoch, topics=None):
    return coordinator.share_group_heartbeat(ShareHeartbeat("g", member, epoch, None, topics, "client", "/127.0.0.1"))


def test_a_share_heartbeat_that_cannot_be_written_changes_nothing(open_pair):
    pair = open_pair()
    a = heartbeat(pair.groups, "a", 0, [TOPIC])
    assert a.error == E.NONE
    epoch = pair.groups.share_groups["g"].group_epoch
    pair.guard.on = True
    b = heartbeat(pair.groups, "b", 0, [TOPIC])
    assert b.error == E.NOT_COORDINATOR  # a failed disk, as Kafka's runtime maps it
    assert list(pair.groups.share_groups["g"].members) == ["a"]
    assert pair.groups.share_groups["g"].group_epoch == epoch
    pair.guard.on = False
    assert heartbeat(pair.groups, "b", 0, [TOPIC]).error == E.NONE
    pair = open_pair()  # a restart: what the members were told is what is there
    group = pair.groups.share_groups["g"]
    assert sorted(group.members) == ["a", "b"] and group.group_epoch == epoch + 1


def test_expired_members_are_written_out_before_they_go(open_pair, clock):
    pair = open_pair()
    a = heartbeat(pair.groups, "a", 0, [TOPIC])
    heartbeat(pair.groups, "b", 0, [TOPIC])
    clock.advance(SESSION_MS - 1000)
    assert heartbeat(pair.groups, "a", pair.groups.share_groups["g"].members["a"].member_epoch).error == E.NONE
    clock.advance(2000)  # b's session ran out, a's did not
    pair.guard.on = True
    pair.groups.expire(clock.time_ms())
    assert sorted(pair.groups.share_groups["g"].members) == ["a", "b"]  # not written: still there
    pair.guard.on = False
    pair.groups.expire(clock.time_ms())  # tried again only after the coordinator's backoff
    assert sorted(pair.groups.share_groups["g"].members) == ["a", "b"]
    assert pair.groups.next_deadline() == clock.time_ms() + GROUP_RETRY_MS
    clock.advance(GROUP_RETRY_MS)
    pair.groups.expire(clock.time_ms())
    assert sorted(pair.groups.share_groups["g"].members) == ["a"]
    pair = open_pair()
    assert sorted(pair.groups.share_groups["g"].members) == ["a"]
    assert a.error == E.NONE


def _acquire(share, key, member, now, count=10):
    sp = share.existing(key)
    runs = sp.acquire([range(o, o + 1) for o in range(0, 200)], member, now, LOCK_MS, LIMIT, AcquireLimits(count))
    share.locked(key)  # as ShareFetch's acquisition tells the lock timer
    return {o: c for first, last, c in runs for o in range(first, last + 1)}


def _key(pair):
    topic_id = pair.logs.topics[TOPIC].topic_id
    return SharePartitionKey("g", topic_id, 0)


def test_the_lock_timer_writes_expired_locks_and_retries_a_failed_write_once_a_second(open_pair, clock, caplog):
    pair = open_pair()
    key = _key(pair)
    assert pair.share.share_partition(key, 0) == E.NONE
    assert _acquire(pair.share, key, "m", clock.time_ms(), 3) == {0: 1, 1: 1, 2: 1}
    assert pair.share.expire_due(clock.time_ms()) == clock.time_ms() + LOCK_MS
    clock.advance(LOCK_MS)
    pair.guard.on = True
    now = clock.time_ms()
    assert pair.share.expire_due(now) == now + RETRY_MS  # kept, tried again in a second, not every tick
    assert pair.share.expire_due(now + 5) == now + RETRY_MS
    assert sum("expired locks are kept" in r.message for r in caplog.records) == 1
    assert dict(pair.share.existing(key).in_flight_records())[0].state is RecordState.ACQUIRED
    pair.guard.on = False
    assert pair.share.expire_due(now + RETRY_MS) > now + RETRY_MS + LOCK_MS  # no lock left: the state topic's next upkeep
    assert dict(pair.share.existing(key).in_flight_records())[0].state is RecordState.AVAILABLE
    pair = open_pair()
    restored = dict(pair.share.existing(key).in_flight_records())
    assert [(restored[o].state, restored[o].delivery_count) for o in range(3)] == [
        (RecordState.AVAILABLE, 1)] * 3


@pytest.mark.parametrize("seed", range(8))
def test_seeded_schedules_keep_delivery_counts_across_restarts(open_pair, clock, seed):
    """Acquisitions, ACCEPT/RELEASE/REJECT, the clock moving past locks (the timer writes) and
    restarts, in a seeded order. After every step: a record's delivery count is at least the
    deliveries that ended before the last restart (released, expired); no accepted or archived
    record is delivered again; nothing is delivered more than the limit; the start offset
    never goes back, a restart included."""
    rng = random.Random(seed)
    pair = open_pair()
    key = _key(pair)
    assert pair.share.share_partition(key, 0) == E.NONE
    held: dict[int, str] = {}
    ended: dict[int, int] = {}  # deliveries that ended (released or expired), each written
    done: set[int] = set()
    start = 0
    for _ in range(150):
        step, now = rng.random(), clock.time_ms()
        if step < 0.4:
            member = rng.choice("xy")
            for offset, count in _acquire(pair.share, key, member, now, rng.choice([1, 4, 9])).items():
                assert offset not in done and offset not in held, f"seed {seed}: {offset} delivered again"
                assert count == ended.get(offset, 0) + 1 <= LIMIT, f"seed {seed}: {offset} count {count}"
                held[offset] = member
        elif step < 0.75 and held:
            offset = rng.choice(sorted(held))
            kind = rng.choice([AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT])
            batch = SimpleNamespace(first_offset=offset, last_offset=offset, acknowledge_types=[kind])
            assert pair.share.acknowledge(key, held.pop(offset), [batch]) == E.NONE
            ended[offset] = ended.get(offset, 0) + 1
            if kind is not AcknowledgeType.RELEASE or ended[offset] >= LIMIT:
                done.add(offset)
        elif step < 0.9:
            clock.advance(LOCK_MS)
            pair.share.expire_due(clock.time_ms())
            for offset in held:
                ended[offset] = ended.get(offset, 0) + 1
                if ended[offset] >= LIMIT:
                    done.add(offset)
            held.clear()
        elif not held:  # a restart with nothing held: every delivery so far ended and was written
            pair = open_pair()
        sp = pair.share.existing(key)
        assert sp.start_offset >= start, f"seed {seed}: start offset went back"
        start = sp.start_offset
