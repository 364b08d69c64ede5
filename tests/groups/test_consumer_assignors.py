"""The server-side assignors of KIP-848 consumer groups (coordinator/assignors.py) as the pure
functions they are: every subscribed partition goes to exactly one subscriber, uniform balances
and keeps partitions, range hands out contiguous ranges."""

from __future__ import annotations

import random
import uuid

import pytest

from trafka.broker.coordinators.group.assignors import ASSIGNORS, range_, uniform


def topics(**counts: int) -> dict[str, tuple[uuid.UUID, int]]:
    return {name: (uuid.uuid5(uuid.NAMESPACE_DNS, name), count) for name, count in counts.items()}


def flat(assignment) -> dict[str, set[tuple[uuid.UUID, int]]]:
    return {m: {(t, p) for t, ps in a.items() for p in ps} for m, a in assignment.items()}


def check_complete(subscriptions, metadata, assignment) -> None:
    owners: dict[tuple[uuid.UUID, int], str] = {}
    for member, partitions in flat(assignment).items():
        for tp in partitions:
            assert tp not in owners, f"{tp} assigned twice"
            owners[tp] = member
    names = {topic_id: name for name, (topic_id, _) in metadata.items()}
    wanted = {(metadata[t][0], p) for subs in subscriptions.values() for t in subs if t in metadata
              for p in range(metadata[t][1])}
    assert set(owners) == wanted
    for (topic_id, _), member in owners.items():
        assert names[topic_id] in subscriptions[member]


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("name", sorted(ASSIGNORS))
def test_every_subscribed_partition_goes_to_one_subscriber(name, seed):
    rng = random.Random(seed)
    metadata = topics(**{f"t{i}": rng.randint(1, 7) for i in range(rng.randint(1, 4))})
    subscriptions = {f"m{i}": set(rng.sample(sorted(metadata), rng.randint(1, len(metadata))))
                     for i in range(rng.randint(1, 6))}
    first = ASSIGNORS[name](subscriptions, metadata, {})
    check_complete(subscriptions, metadata, first)
    subscriptions.pop(sorted(subscriptions)[0])
    subscriptions["late"] = set(metadata)
    check_complete(subscriptions, metadata, ASSIGNORS[name](subscriptions, metadata, first))


@pytest.mark.parametrize("members, partitions", [(1, 4), (2, 4), (3, 4), (3, 10), (5, 3)])
def test_uniform_balances_a_homogeneous_group(members, partitions):
    metadata = topics(a=partitions)
    subscriptions = {f"m{i}": {"a"} for i in range(members)}
    sizes = sorted(len(ps) for ps in flat(uniform(subscriptions, metadata, {})).values())
    assert sizes[-1] - sizes[0] <= 1 and sum(sizes) == partitions


def test_uniform_keeps_partitions_when_a_member_joins_or_leaves():
    metadata = topics(a=6, b=6)
    two = {"m1": {"a", "b"}, "m2": {"a", "b"}}
    before = flat(uniform(two, metadata, {}))
    three = uniform({**two, "m3": {"a", "b"}}, metadata, uniform(two, metadata, {}))
    after = flat(three)
    assert [len(after[m]) for m in ("m1", "m2", "m3")] == [4, 4, 4]
    assert after["m1"] <= before["m1"] and after["m2"] <= before["m2"]  # only moves to the newcomer
    back = flat(uniform(two, metadata, three))
    assert after["m1"] <= back["m1"] and after["m2"] <= back["m2"]


def test_uniform_heterogeneous_subscriptions_balance_where_they_can():
    metadata = topics(a=4, b=4)
    subscriptions = {"both": {"a", "b"}, "only-a": {"a"}, "only-b": {"b"}}
    sizes = {m: len(ps) for m, ps in flat(uniform(subscriptions, metadata, {})).items()}
    assert sorted(sizes.values()) == [2, 3, 3]


def test_range_gives_contiguous_ranges_in_member_id_order():
    metadata = topics(a=5, b=2)
    result = flat(range_({"x": {"a", "b"}, "y": {"a"}}, metadata, {}))
    a, b = metadata["a"][0], metadata["b"][0]
    assert result == {"x": {(a, 0), (a, 1), (a, 2), (b, 0), (b, 1)}, "y": {(a, 3), (a, 4)}}
