"""Share-group assignment as Kafka's SimpleAssignor (KIP-932) gives it, through the group
coordinator's ShareGroupHeartbeat in process: partitions spread over the members (counts
differing by one at most), a partition given to several members only when members outnumber
partitions, and a member joining or leaving moving only the partitions balance needs.
Members subscribed to different topics are balanced topic by topic."""

from __future__ import annotations

import random

import pytest

from testkit.coordinators import TOPIC, reopening_broker
from trafka.broker.coordinators.share.group import ShareHeartbeat
from trafka.wire.errors import ErrorCode as E

PARTITIONS = 6


@pytest.fixture
def groups(tmp_path, clock):
    with reopening_broker(tmp_path, clock, partitions=PARTITIONS) as reopen:
        broker = reopen(**{"share.coordinator.state.topic.num.partitions": 1})
        broker.logs.create_topic("other", 3)
        yield broker.group_coordinator


class Group:
    """Members heartbeating one share group; `assignment()` is what each was last given."""

    def __init__(self, coordinator, group_id="g"):
        self.coordinator, self.group_id = coordinator, group_id
        self.epochs: dict[str, int] = {}
        self.held: dict[str, dict] = {}
        self.topic_names = {}

    def _beat(self, member, epoch, topics=None):
        answer = self.coordinator.share_group_heartbeat(
            ShareHeartbeat(self.group_id, member, epoch, None, topics, "client", "/127.0.0.1"))
        assert answer.error == E.NONE, answer
        if answer.assignment is not None:
            self.held[member] = answer.assignment
        return answer

    def join(self, member, topics=(TOPIC,)):
        self.epochs[member] = self._beat(member, 0, list(topics)).member_epoch
        self.settle()

    def leave(self, member):
        self._beat(member, -1)
        del self.epochs[member], self.held[member]
        self.settle()

    def settle(self):
        for member in list(self.epochs):
            self.epochs[member] = self._beat(member, self.epochs[member]).member_epoch

    def assignment(self, topic=TOPIC) -> dict[str, set[int]]:
        topic_id = self.coordinator.logs.topics[topic].topic_id
        return {m: set(held.get(topic_id, ())) for m, held in self.held.items()}


def sharing(assignment: dict[str, set[int]]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for partitions in assignment.values():
        for p in partitions:
            counts[p] = counts.get(p, 0) + 1
    return counts


def moved(before: dict[str, set[int]], after: dict[str, set[int]]) -> int:
    """Partitions members kept before and after lost or gained (members in both)."""
    return sum(len(before[m] ^ after[m]) for m in before if m in after)


def test_partitions_are_spread_over_members_not_given_to_all(groups):
    group = Group(groups)
    group.join("a")
    assert group.assignment() == {"a": set(range(PARTITIONS))}
    group.join("b")
    after = group.assignment()
    assert sorted(len(p) for p in after.values()) == [3, 3]
    assert after["a"] | after["b"] == set(range(PARTITIONS)) and not after["a"] & after["b"]
    group.join("c")
    assert sorted(len(p) for p in group.assignment().values()) == [2, 2, 2]
    assert sharing(group.assignment()) == {p: 1 for p in range(PARTITIONS)}


def test_a_partition_is_shared_only_when_members_outnumber_partitions(groups):
    group = Group(groups)
    for i in range(PARTITIONS):
        group.join(f"m{i}")
    assert sharing(group.assignment()) == {p: 1 for p in range(PARTITIONS)}
    assert all(len(p) == 1 for p in group.assignment().values())
    group.join("m6")
    # Seven members over six partitions: each partition to two members (Kafka's desired sharing,
    # members rounded up over partitions), each member one or two of them.
    assert sharing(group.assignment()) == {p: 2 for p in range(PARTITIONS)}
    assert sorted(len(p) for p in group.assignment().values()) == [1, 1, 2, 2, 2, 2, 2]


def test_joining_and_leaving_move_only_what_balance_needs(groups):
    group = Group(groups)
    group.join("a")
    group.join("b")
    before = group.assignment()
    group.join("c")
    after = group.assignment()
    # Each of a and b gives up one partition to c; none moves between a and b.
    assert moved(before, after) == 2
    assert after["a"] <= before["a"] and after["b"] <= before["b"]
    before = after
    group.leave("b")
    after = group.assignment()
    # b's two partitions go to a and c, which keep their own.
    assert before["a"] <= after["a"] and before["c"] <= after["c"]
    assert sorted(len(p) for p in after.values()) == [3, 3]


def test_members_subscribed_to_different_topics_are_balanced_topic_by_topic(groups):
    group = Group(groups)
    group.join("a", (TOPIC,))
    group.join("b", ("other",))
    group.join("c", (TOPIC, "other"))
    assert group.assignment(TOPIC)["b"] == set() and group.assignment("other")["a"] == set()
    assert sorted(len(p) for m, p in group.assignment(TOPIC).items() if m != "b") == [3, 3]
    assert sorted(len(p) for m, p in group.assignment("other").items() if m != "a") == [1, 2]
    assert sharing(group.assignment(TOPIC)) == {p: 1 for p in range(PARTITIONS)}
    assert sharing(group.assignment("other")) == {p: 1 for p in range(3)}


def test_seeded_joins_and_leaves_keep_balance_and_stickiness(groups):
    """Members join and leave at random: after each change every partition is held, by
    ceil(members / partitions) members, and member counts differ by one at most. While no
    partition is shared (members never outnumber partitions), a member present before and
    after loses only what balance makes it give up: nothing when a member leaves, and only what
    the new member takes when one joins."""
    rng = random.Random(43)
    group = Group(groups)
    names = iter(f"m{i}" for i in range(1000))
    for _ in range(80):
        before = group.assignment()
        if group.epochs and (len(group.epochs) > 9 or rng.random() < 0.4):
            group.leave(rng.choice(sorted(group.epochs)))
        else:
            group.join(next(names))
        after = group.assignment()
        if not after:
            continue
        assert sharing(after) == {p: -(-len(after) // PARTITIONS) for p in range(PARTITIONS)}
        sizes = [len(p) for p in after.values()]
        assert max(sizes) - min(sizes) <= 1
        if before and len(before) <= PARTITIONS and len(after) <= PARTITIONS:
            stayed = set(before) & set(after)
            if len(after) < len(before):
                assert all(before[m] <= after[m] for m in stayed), (before, after)
            else:
                [joined] = set(after) - stayed
                assert all(after[m] <= before[m] for m in stayed), (before, after)
                assert sum(len(before[m] - after[m]) for m in stayed) == len(after[joined])
