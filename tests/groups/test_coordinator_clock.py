"""The coordinator's state machine in process, with a manual clock: time moves, nothing sleeps."""

from __future__ import annotations

import pytest
import trio
from trio.testing import wait_all_tasks_blocked

from testkit.coordinators import reopening_broker
from trafka.broker.coordinators.group import formats
from trafka.broker.coordinators.runtime import internal_topic
from trafka.broker.coordinators.group.classic import JoinRequest
from trafka.broker.coordinators.group.consumer import HeartbeatRequest
from trafka.broker.coordinators.group.coordinator import MIN_TIMER_MS, RETRY_MS
from trafka.broker.coordinators.group.offsets import OffsetCommit
from trafka.broker.coordinators.group.group import GroupState
from trafka.storage.errors import StorageWriteFailed
from trafka.wire.errors import ErrorCode as E

SESSION = 6000
REBALANCE = 10000


@pytest.fixture
def open_coordinator(tmp_path, clock):
    with reopening_broker(tmp_path, clock, partitions=4) as reopen:
        yield lambda **settings: reopen(**settings).group_coordinator


def join(coordinator, member_id="", instance=None, group="g", protocols=(("range", b"sub"),), version_required=True):
    return coordinator.join_group(JoinRequest(
        group, member_id, instance, "client", "/127.0.0.1", SESSION, REBALANCE, "consumer", list(protocols), version_required,
    ))


async def join_new(coordinator, **kwargs):
    """A v4+ join: MEMBER_ID_REQUIRED, then the real join."""
    first = await join(coordinator, **kwargs)
    assert first.error == E.MEMBER_ID_REQUIRED
    return await join(coordinator, member_id=first.member_id, **kwargs)


class Parked:
    """Joins running as tasks, as handlers would: results land in `results` by name."""

    def __init__(self, nursery, coordinator):
        self.nursery, self.coordinator, self.results = nursery, coordinator, {}

    async def join(self, name, **kwargs):
        async def run():
            self.results[name] = await join(self.coordinator, **kwargs)

        self.nursery.start_soon(run)
        await wait_all_tasks_blocked()


async def stable_group(coordinator, count):
    """`count` members in a Stable group; returns their member ids, leader first."""
    ids: list[str] = []
    for _ in range(count):
        async with trio.open_nursery() as nursery:
            parked = Parked(nursery, coordinator)
            await parked.join("new", member_id=(await join(coordinator)).member_id)
            for i, member_id in enumerate(ids):  # the others learn of the rebalance and rejoin
                await parked.join(i, member_id=member_id)
        ids.append(parked.results["new"].member_id)
    leader, generation = parked.results["new"].leader, parked.results["new"].generation
    ids = [leader] + [m for m in ids if m != leader]
    async with trio.open_nursery() as nursery:
        for member_id in ids[1:]:
            nursery.start_soon(coordinator.sync_group, "g", generation, member_id, None, None, None, {})
        await wait_all_tasks_blocked()
        await coordinator.sync_group("g", generation, leader, None, None, None, {m: m.encode() for m in ids})
    assert coordinator.groups["g"].state is GroupState.STABLE
    return ids


def test_first_join_needs_a_member_id_then_leads_a_group_of_one(open_coordinator):
    coordinator = open_coordinator()

    async def main():
        result = await join_new(coordinator)
        assert (result.error, result.generation, result.leader) == (E.NONE, 1, result.member_id)
        assert [m[0] for m in result.members] == [result.member_id]
        sync = await coordinator.sync_group("g", 1, result.member_id, None, "consumer", "range", {result.member_id: b"a"})
        assert (sync.error, sync.assignment) == (E.NONE, b"a")
        assert coordinator.groups["g"].state is GroupState.STABLE

    trio.run(main)


def test_a_silent_member_expires_after_its_session_and_a_heartbeat_keeps_it(open_coordinator, clock):
    coordinator = open_coordinator()

    async def main():
        [a, b] = await stable_group(coordinator, 2)
        generation = coordinator.groups["g"].generation
        clock.advance(SESSION - 1)
        assert coordinator.heartbeat("g", generation, a, None) == E.NONE
        coordinator.expire(clock.time_ms())
        assert set(coordinator.groups["g"].members) == {a, b}
        clock.advance(2)
        coordinator.expire(clock.time_ms())
        group = coordinator.groups["g"]
        assert set(group.members) == {a}
        assert group.state is GroupState.PREPARING_REBALANCE
        assert coordinator.heartbeat("g", generation, b, None) == E.UNKNOWN_MEMBER_ID
        assert coordinator.heartbeat("g", generation, a, None) == E.REBALANCE_IN_PROGRESS
        assert coordinator.next_deadline() is not None

    trio.run(main)


def test_the_rebalance_timeout_drops_members_that_do_not_rejoin(open_coordinator, clock):
    coordinator = open_coordinator()

    async def main():
        [a, b] = await stable_group(coordinator, 2)
        async with trio.open_nursery() as nursery:
            parked = Parked(nursery, coordinator)
            await parked.join("a", member_id=a)  # a rejoins; b keeps heartbeating but never does
            for _ in range(REBALANCE // 2000):
                clock.advance(2000)
                assert coordinator.heartbeat("g", 2, b, None) == E.REBALANCE_IN_PROGRESS
                coordinator.expire(clock.time_ms())
            assert "a" not in parked.results
            clock.advance(1)
            coordinator.expire(clock.time_ms())
        result = parked.results["a"]
        assert (result.error, result.generation, [m[0] for m in result.members]) == (E.NONE, 3, [a])
        assert set(coordinator.groups["g"].members) == {a}

    trio.run(main)


def test_initial_rebalance_delay_waits_for_more_members_up_to_the_rebalance_timeout(open_coordinator, clock):
    coordinator = open_coordinator(**{"group.initial.rebalance.delay.ms": 3000})

    async def main():
        async with trio.open_nursery() as nursery:
            parked = Parked(nursery, coordinator)
            await parked.join("a", member_id=(await join(coordinator)).member_id)
            clock.advance(2000)
            await parked.join("b", member_id=(await join(coordinator)).member_id)
            clock.advance(1000)
            coordinator.expire(clock.time_ms())
            await wait_all_tasks_blocked()
            assert parked.results == {}  # b arrived within the delay: wait another one
            clock.advance(3000)
            coordinator.expire(clock.time_ms())
        assert {r.generation for r in parked.results.values()} == {1}
        assert all(len(r.members) == 2 for r in parked.results.values() if r.member_id == r.leader)

    trio.run(main)


def test_a_leader_that_never_syncs_is_removed_after_the_rebalance_timeout(open_coordinator, clock):
    coordinator = open_coordinator()

    async def main():
        async with trio.open_nursery() as nursery:
            parked = Parked(nursery, coordinator)
            await parked.join("a", member_id=(await join(coordinator)).member_id)
            await parked.join("b", member_id=(await join(coordinator)).member_id)
            await parked.join("a", member_id=parked.results["a"].member_id)
        a, b = parked.results["a"], parked.results["b"]
        assert a.generation == b.generation == 2
        leader, follower = (a, b) if a.member_id == a.leader else (b, a)
        async with trio.open_nursery() as nursery:
            synced = {}

            async def sync():
                synced["result"] = await coordinator.sync_group("g", 2, follower.member_id, None, None, None, {})

            nursery.start_soon(sync)
            await wait_all_tasks_blocked()
            for _ in range(REBALANCE // 2000):  # the leader heartbeats, so only the sync timeout can catch it
                await wait_all_tasks_blocked()
                assert "result" not in synced
                clock.advance(2000)
                assert coordinator.heartbeat("g", 2, leader.member_id, None) == E.NONE
                coordinator.expire(clock.time_ms())
        assert synced["result"].error == E.REBALANCE_IN_PROGRESS
        assert set(coordinator.groups["g"].members) == {follower.member_id}

    trio.run(main)


def test_static_member_rejoins_stable_group_without_a_rebalance_and_fences_its_old_id(open_coordinator):
    coordinator = open_coordinator()

    async def main():
        async with trio.open_nursery() as nursery:
            parked = Parked(nursery, coordinator)
            await parked.join("s", instance="pod-1")  # static: no MEMBER_ID_REQUIRED round
        old = parked.results["s"]
        assert old.error == E.NONE
        await coordinator.sync_group("g", old.generation, old.member_id, "pod-1", None, None, {old.member_id: b"mine"})
        again = await join(coordinator, instance="pod-1")
        assert (again.error, again.generation) == (E.NONE, old.generation)
        assert again.member_id != old.member_id
        assert coordinator.groups["g"].state is GroupState.STABLE
        sync = await coordinator.sync_group("g", again.generation, again.member_id, "pod-1", None, None, {})
        assert sync.assignment == b"mine"
        assert coordinator.heartbeat("g", old.generation, old.member_id, "pod-1") == E.FENCED_INSTANCE_ID
        assert coordinator.leave_group("g", [(old.member_id, "pod-1")]) == (E.NONE, [E.FENCED_INSTANCE_ID])

    trio.run(main)


def test_the_usual_errors(open_coordinator):
    coordinator = open_coordinator()

    async def main():
        [a] = await stable_group(coordinator, 1)
        assert (await join(coordinator, protocols=[("other", b"")])).error == E.INCONSISTENT_GROUP_PROTOCOL
        assert (await join(coordinator, member_id="made-up")).error == E.UNKNOWN_MEMBER_ID
        assert (await join(coordinator, group="")).error == E.INVALID_GROUP_ID
        assert coordinator.heartbeat("g", 7, a, None) == E.ILLEGAL_GENERATION
        assert coordinator.heartbeat("nope", 1, a, None) == E.UNKNOWN_MEMBER_ID
        assert (await coordinator.sync_group("g", 7, a, None, None, None, {})).error == E.ILLEGAL_GENERATION
        commit = [OffsetCommit("t", 0, 5, -1, None)]
        assert coordinator.commit_offsets("g", -1, "", None, commit) == [E.UNKNOWN_MEMBER_ID]  # g has members
        assert coordinator.commit_offsets("g", 0, a, None, commit) == [E.ILLEGAL_GENERATION]
        assert coordinator.commit_offsets("nope", 3, "x", None, commit) == [E.ILLEGAL_GENERATION]
        assert coordinator.commit_offsets("g", 1, a, None, [*commit, OffsetCommit("t", 9, 1, -1, None)]) == [
            E.NONE, E.UNKNOWN_TOPIC_OR_PARTITION,
        ]
        assert coordinator.commit_offsets("g", 1, a, None, [OffsetCommit("t", 1, 1, -1, "x" * 5000)]) == [
            E.OFFSET_METADATA_TOO_LARGE,
        ]
        assert coordinator.delete_groups(["g"]) == [E.NON_EMPTY_GROUP]
        # b"sub" is no consumer subscription: unreadable counts as subscribed to everything.
        assert coordinator.delete_offsets("g", [("t", 0)]) == (E.NONE, [E.GROUP_SUBSCRIBED_TO_TOPIC])
        assert coordinator.leave_group("g", [(a, None), ("ghost", None)]) == (E.NONE, [E.NONE, E.UNKNOWN_MEMBER_ID])
        assert coordinator.groups["g"].state is GroupState.EMPTY
        assert coordinator.delete_offsets("g", [("t", 0)]) == (E.NONE, [E.NONE])

    trio.run(main)


def test_groups_and_offsets_are_replayed_from_consumer_offsets(open_coordinator, clock):
    coordinator = open_coordinator()

    async def main():
        return await stable_group(coordinator, 2)

    leader, follower = trio.run(main)
    coordinator.commit_offsets("g", 2, leader, None, [OffsetCommit("t", 0, 10, 3, "m"), OffsetCommit("t", 1, 20, -1, None)])
    coordinator.commit_offsets("g", 2, leader, None, [OffsetCommit("t", 0, 11, 3, "m2")])
    coordinator.commit_offsets("simple", -1, "", None, [OffsetCommit("t", 2, 5, -1, None)])
    coordinator.commit_offsets("doomed", -1, "", None, [OffsetCommit("t", 2, 5, -1, None)])
    assert coordinator.delete_groups(["doomed"]) == [E.NONE]

    reopened = open_coordinator()
    assert set(reopened.groups) == {"g", "simple"}
    group = reopened.groups["g"]
    assert (group.state, group.generation, group.leader_id) == (GroupState.STABLE, 2, leader)
    assert group.members[follower].assignment == follower.encode()
    assert {tp: (o.offset, o.leader_epoch, o.metadata) for tp, o in group.offsets.items()} == {
        ("t", 0): (11, 3, "m2"), ("t", 1): (20, -1, ""),
    }
    assert reopened.groups["simple"].state is GroupState.EMPTY
    # The members must heartbeat again within their session, or they are dropped.
    assert reopened.heartbeat("g", 2, leader, None) == E.NONE
    clock.advance(SESSION + 1)
    reopened.expire(clock.time_ms())
    assert follower not in reopened.groups["g"].members


def test_record_formats_are_kafkas():
    key = formats.offset_key(formats.OffsetKey("g", "t", 3))
    assert key.hex() == "0001" "0001" "67" "0001" "74" "00000003"
    value = formats.offset_value(formats.CommittedOffset(42, 5, "m", 1000))
    assert value.hex() == "0003" "000000000000002a" "00000005" "0001" "6d" "00000000000003e8"
    assert formats.group_key(formats.GroupKey("g")).hex() == "0002" "0001" "67"
    record = formats.GroupRecord("consumer", 3, "range", "m1", 7, (
        formats.GroupMemberRecord("m1", None, "c", "/h", 300, 10, b"s", b"a"),
    ))
    assert formats.group_value(record).hex() == (
        "0003" "0008" + b"consumer".hex() + "00000003" "0005" + b"range".hex() + "0002" + b"m1".hex()
        + "0000000000000007" "00000001" "0002" + b"m1".hex() + "ffff" "0001" "63" "0002" + b"/h".hex()
        + "0000012c" "0000000a" "00000001" "73" "00000001" "61"
    )
    assert formats.parse_group_value(formats.group_value(record)) == record


def test_group_partition_follows_javas_string_hash():
    assert internal_topic.java_string_hash("hello") == 99162322
    assert internal_topic.java_string_hash("polygenelubricants") == -(2**31)  # abs() of it is taken as 0
    assert internal_topic.partition_for("polygenelubricants", 50) == 0
    assert internal_topic.partition_for("hello", 50) == 99162322 % 50


def test_offsets_expire_after_offsets_retention_minutes(open_coordinator, clock):
    """KIP-211: a consumer group's offsets expire once it has been Empty for the retention;
    offsets committed without membership expire that long after their own commit."""
    coordinator = open_coordinator(**{"offsets.retention.minutes": 10})
    minute = 60_000
    [member] = trio.run(stable_group, coordinator, 1)
    generation = coordinator.groups["g"].generation
    assert coordinator.commit_offsets("g", generation, member, None, [OffsetCommit("t", 0, 5, -1, "")]) == [E.NONE]
    assert coordinator.commit_offsets("solo", -1, "", None, [OffsetCommit("t", 1, 7, -1, "")]) == [E.NONE]

    clock.advance(11 * minute)
    coordinator.expire_offsets(clock.time_ms())
    assert ("t", 0) in coordinator.groups["g"].offsets  # a Stable group's offsets never expire
    assert "solo" not in coordinator.groups  # 11 minutes after its commit: gone with its group

    coordinator.leave_group("g", [(member, None)])
    assert coordinator.groups["g"].state is GroupState.EMPTY
    clock.advance(9 * minute)
    coordinator.expire_offsets(clock.time_ms())
    assert ("t", 0) in coordinator.groups["g"].offsets  # Empty for 9 of 10 minutes
    clock.advance(2 * minute)
    coordinator.expire_offsets(clock.time_ms())
    assert "g" not in coordinator.groups

    reopened = open_coordinator(**{"offsets.retention.minutes": 10})  # the tombstones are in the log
    assert "g" not in reopened.groups and "solo" not in reopened.groups


def test_a_failed_write_of_the_assignment_fails_the_sync_and_the_group_rebalances(open_coordinator):
    """Kafka fails the SyncGroup when the group's metadata cannot be written (a disk error is
    NOT_COORDINATOR), instead of answering as if the assignment were stored."""
    coordinator = open_coordinator()

    async def main():
        result = await join_new(coordinator)
        partition = coordinator.offsets_topic.partition_for("g")
        coordinator.offsets_topic.logs.log("__consumer_offsets", partition).close()  # LogClosed from now on
        sync = await coordinator.sync_group("g", 1, result.member_id, None, "consumer", "range", {result.member_id: b"a"})
        assert (sync.error, sync.assignment) == (E.NOT_COORDINATOR, b"")
        group = coordinator.groups["g"]
        assert group.state is not GroupState.STABLE
        assert group.members[result.member_id].assignment == b""

    trio.run(main)


class FailingAppends:
    """An append guard: while `on`, every append of `__consumer_offsets` fails as a full disk."""

    def __init__(self):
        self.on, self.tries = False, 0

    def __call__(self, topic, partition):
        if self.on:
            self.tries += 1
            raise StorageWriteFailed(f"{topic}-{partition}: no space left on device (injected)")


def test_a_failed_timer_write_is_retried_after_a_backoff_with_one_error_line(open_coordinator, clock, caplog):
    """A consumer member's session runs out while `__consumer_offsets` refuses writes: the
    member stays (nothing was written), the expiry is tried again RETRY_MS later, not at every
    timer tick, with one error line; once writes succeed it is fenced."""
    coordinator = open_coordinator()
    joined = coordinator.consumer_group_heartbeat(HeartbeatRequest(
        "cg", "", 0, rebalance_timeout_ms=REBALANCE, subscribed_topic_names=["t"], owned={}, api_version=0))
    assert joined.error == E.NONE
    guard = FailingAppends()
    coordinator.offsets_topic.append_guard = guard
    clock.advance(coordinator.config["group.consumer.session.timeout.ms"])
    now = clock.time_ms()
    guard.on = True
    coordinator.expire(now)
    assert joined.member_id in coordinator.consumer_groups["cg"].members
    assert coordinator.next_deadline() == now + RETRY_MS
    coordinator.expire(now + MIN_TIMER_MS)  # the timer's next tick: not tried again yet
    assert guard.tries == 1
    assert sum("not written" in r.message for r in caplog.records if r.levelname == "ERROR") == 1
    guard.on = False
    coordinator.expire(now + RETRY_MS)
    assert joined.member_id not in coordinator.consumer_groups["cg"].members
    assert coordinator.next_deadline() is None
