"""What keeps a classic group member alive, as Kafka's classic group coordinator counts it
(GroupMetadataManager's rescheduleClassicGroupMemberHeartbeat, OffsetMetadataManager.commitOffset),
on the broker clock in process: the session runs from the member's last request among a
Heartbeat (its current generation, Stable, CompletingRebalance or PreparingRebalance), an
OffsetCommit in a Stable or PreparingRebalance group (whatever became of its partitions), a
completed join (every member, a static one that did not rejoin too) and the assignment's
propagation. A SyncGroup to a Stable group, a Heartbeat with a stale generation and a refused
OffsetCommit do not count."""

from __future__ import annotations

import pytest
import trio
from trio.testing import wait_all_tasks_blocked

from testkit.coordinators import reopening_broker
from trafka.broker.coordinators.group.classic import JoinRequest
from trafka.broker.coordinators.group.group import GroupState
from trafka.broker.coordinators.group.offsets import OffsetCommit
from trafka.wire.errors import ErrorCode as E

SESSION, REBALANCE = 6000, 2000


@pytest.fixture
def coordinator(tmp_path, clock):
    with reopening_broker(tmp_path, clock, partitions=4) as reopen:
        yield reopen().group_coordinator


def join(coordinator, member_id="", instance=None, rebalance=REBALANCE):
    return coordinator.join_group(JoinRequest("g", member_id, instance, "client", "/127.0.0.1", SESSION, rebalance,
                                              "consumer", [("range", b"sub")], True))


async def stable_pair(coordinator, instances=(None, None), rebalance=REBALANCE):
    """Members a (the leader) and b in a Stable group at generation 2, at the clock's time."""
    def join(coordinator, member_id="", instance=None):
        return globals()["join"](coordinator, member_id, instance, rebalance)
    first = await join(coordinator, instance=instances[0])
    a = first.member_id if first.error == E.NONE else (await join(coordinator, first.member_id, instances[0])).member_id
    assert (await coordinator.sync_group("g", 1, a, None, None, None, {a: b"a"})).error == E.NONE
    answers = {}
    async with trio.open_nursery() as nursery:
        async def run(name, member_id, instance):
            answers[name] = await join(coordinator, member_id, instance)
        second = await join(coordinator, instance=instances[1])
        b_id = second.member_id
        nursery.start_soon(run, "b", b_id, instances[1])
        await wait_all_tasks_blocked()
        nursery.start_soon(run, "a", a, instances[0])
    b = answers["b"].member_id
    generation = answers["a"].generation
    async with trio.open_nursery() as nursery:
        nursery.start_soon(coordinator.sync_group, "g", generation, b, None, None, None, {})
        await wait_all_tasks_blocked()
        await coordinator.sync_group("g", generation, a, None, None, None, {a: b"a", b: b"b"})
    assert coordinator.groups["g"].state is GroupState.STABLE
    return a, b, generation


def members(coordinator, clock):
    coordinator.expire(clock.timer_ms())
    return set(coordinator.groups["g"].members)


def test_an_offset_commit_keeps_the_member_alive_even_when_every_partition_is_refused(coordinator, clock):
    """Kafka reschedules the session before it looks at the offsets: a commit whose only
    partition is refused (metadata too large) counts as much as an accepted one."""
    async def main():
        a, b, generation = await stable_pair(coordinator)
        clock.advance(SESSION - 1000)
        coordinator.heartbeat("g", generation, a, None)
        assert coordinator.commit_offsets("g", generation, b, None, [OffsetCommit("t", 0, 5, -1, "x" * 5000)]) \
            == [E.OFFSET_METADATA_TOO_LARGE]
        clock.advance(SESSION - 1)
        assert members(coordinator, clock) == {a, b}
        clock.advance(1)
        assert members(coordinator, clock) == set()  # a's heartbeat was older still
    trio.run(main)


def test_an_accepted_offset_commit_keeps_the_member_alive_a_refused_one_does_not(coordinator, clock):
    async def main():
        a, b, generation = await stable_pair(coordinator)
        clock.advance(SESSION - 1000)
        assert coordinator.commit_offsets("g", generation, a, None, [OffsetCommit("t", 0, 5, -1, None)]) == [E.NONE]
        assert coordinator.commit_offsets("g", generation - 1, b, None, [OffsetCommit("t", 0, 5, -1, None)]) \
            == [E.ILLEGAL_GENERATION]
        clock.advance(1000)  # both sessions began SESSION ago; a's commit restarted its own
        assert members(coordinator, clock) == {a}
    trio.run(main)


def test_a_sync_group_to_a_stable_group_does_not_keep_the_member_alive(coordinator, clock):
    """Kafka answers a SyncGroup to a Stable group with the member's assignment and leaves its
    session where it was."""
    async def main():
        a, b, generation = await stable_pair(coordinator)
        clock.advance(SESSION - 1000)
        assert coordinator.heartbeat("g", generation, a, None) == E.NONE
        answer = await coordinator.sync_group("g", generation, b, None, None, None, {})
        assert (answer.error, answer.assignment) == (E.NONE, b"b")
        clock.advance(1000)
        assert members(coordinator, clock) == {a}
    trio.run(main)


def test_a_heartbeat_with_a_stale_generation_during_a_rebalance_is_illegal_and_does_not_count(coordinator, clock):
    """Kafka checks the generation before the state: a heartbeat of an older generation is
    ILLEGAL_GENERATION even while the group prepares a rebalance, and reschedules nothing."""
    async def main():
        a, b, generation = await stable_pair(coordinator)
        clock.advance(SESSION - 1000)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(join, coordinator, a)  # the leader rejoins: PreparingRebalance
            await wait_all_tasks_blocked()
            assert coordinator.groups["g"].state is GroupState.PREPARING_REBALANCE
            assert coordinator.heartbeat("g", generation - 1, b, None) == E.ILLEGAL_GENERATION
            clock.advance(1000)
            assert b not in members(coordinator, clock)
            nursery.cancel_scope.cancel()
    trio.run(main)


def test_a_heartbeat_of_the_current_generation_during_a_rebalance_counts(coordinator, clock):
    async def main():
        a, b, generation = await stable_pair(coordinator, rebalance=3 * SESSION)
        clock.advance(SESSION - 1000)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(join, coordinator, a, None, 3 * SESSION)
            await wait_all_tasks_blocked()
            assert coordinator.heartbeat("g", generation, b, None) == E.REBALANCE_IN_PROGRESS
            clock.advance(SESSION - 1)
            assert b in members(coordinator, clock)
            clock.advance(1)
            assert b not in members(coordinator, clock)
            nursery.cancel_scope.cancel()
    trio.run(main)


def test_a_completed_join_restarts_the_session_of_a_static_member_that_did_not_rejoin(coordinator, clock):
    """Kafka's completeJoin reschedules every member's heartbeat, a static member kept without
    rejoining included: its session runs from the new generation, not from its last
    heartbeat, until the sync timeout removes it for never syncing."""
    rebalance = 4000
    async def main():
        a, b, generation = await stable_pair(coordinator, instances=("ia", "ib"), rebalance=rebalance)
        clock.advance(1000)
        assert coordinator.heartbeat("g", generation, b, None) == E.NONE  # b's last request, t=1000
        clock.advance(500)
        answers = {}
        async with trio.open_nursery() as nursery:
            async def rejoin():
                answers["a"] = await join(coordinator, a, "ia", rebalance)
            nursery.start_soon(rejoin)  # the leader rejoins at t=1500; b does not
            await wait_all_tasks_blocked()
            clock.advance(rebalance)  # t=5500: the rebalance timeout completes the join, b kept
            coordinator.expire(clock.timer_ms())
        assert answers["a"].generation == generation + 1
        sync = await coordinator.sync_group("g", generation + 1, a, None, None, None, {a: b"a", b: b"b"})
        assert sync.error == E.NONE
        clock.advance(1500)  # t=7000, SESSION after b's last heartbeat
        assert b in members(coordinator, clock)
        clock.advance(rebalance - 1500 - 1)  # t=9499, just before the sync timeout
        assert b in members(coordinator, clock)
        clock.advance(1)
        assert members(coordinator, clock) == {a}
    trio.run(main)
