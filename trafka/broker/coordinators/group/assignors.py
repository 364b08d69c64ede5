"""Server-side assignors of KIP-848 consumer groups: `uniform` and `range`.

An assignor gets every member's subscribed topic names, the subscribed topics' metadata
(name -> (topic id, partition count), existing topics only) and the previous target assignment,
and returns the new target: member id -> {topic id: frozenset of partitions}. Every member
gets an entry, possibly empty.

- uniform (Kafka's UniformAssignor, the default): spreads all subscribed partitions so member
  counts differ by at most one where subscriptions allow it, and keeps each member's previous
  partitions where it can (sticky), so a rebalance moves as little as possible.
- range (Kafka's RangeAssignor): per topic, the members subscribed to it in member id order
  each take a contiguous range; the first `count % members` take one more.
"""

from __future__ import annotations

import uuid
from typing import Callable

from trafka.broker.coordinators.group.consumer_group import Assignment

TopicPartition = tuple[uuid.UUID, int]
Assignor = Callable[[dict[str, set[str]], dict[str, tuple[uuid.UUID, int]], dict[str, Assignment]], dict[str, Assignment]]

# Kafka's class names, accepted in group.consumer.assignors and ServerAssignor.
CLASS_NAMES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}


def short_name(name: str) -> str:
    return CLASS_NAMES.get(name, name)


def _to_assignment(partitions: set[TopicPartition]) -> Assignment:
    out: dict[uuid.UUID, set[int]] = {}
    for topic_id, p in partitions:
        out.setdefault(topic_id, set()).add(p)
    return {topic_id: frozenset(ps) for topic_id, ps in out.items()}


def uniform(subscriptions: dict[str, set[str]], metadata: dict[str, tuple[uuid.UUID, int]],
            previous: dict[str, Assignment]) -> dict[str, Assignment]:
    eligible: dict[str, set[TopicPartition]] = {
        member_id: {(metadata[t][0], p) for t in topics if t in metadata for p in range(metadata[t][1])}
        for member_id, topics in subscriptions.items()
    }
    owned: dict[str, set[TopicPartition]] = {m: set() for m in subscriptions}
    taken: set[TopicPartition] = set()
    # Keep what each member had and may still have.
    for member_id in sorted(subscriptions):
        for topic_id, partitions in previous.get(member_id, {}).items():
            for p in partitions:
                tp = (topic_id, p)
                if tp in eligible[member_id] and tp not in taken:
                    owned[member_id].add(tp)
                    taken.add(tp)
    # Members above their fair share hand the surplus back before the free partitions go out.
    all_partitions = set().union(*eligible.values()) if eligible else set()
    if subscriptions and all(e == all_partitions for e in eligible.values()):
        quota, extra = divmod(len(all_partitions), len(subscriptions))
        for member_id in sorted(owned, key=lambda m: (-len(owned[m]), m)):
            allowed = quota + (1 if extra > 0 else 0)
            if len(owned[member_id]) >= quota + 1 and extra > 0:
                extra -= 1
            surplus = sorted(owned[member_id])[allowed:]
            for tp in surplus:
                owned[member_id].discard(tp)
                taken.discard(tp)
    # Free partitions go, one by one, to the least loaded member that subscribes to them.
    for tp in sorted(all_partitions - taken):
        candidates = [m for m in subscriptions if tp in eligible[m]]
        best = min(candidates, key=lambda m: (len(owned[m]), m))
        owned[best].add(tp)
    # Heterogeneous subscriptions: move partitions from the most to the least loaded while that
    # narrows the gap.
    moved = True
    while moved:
        moved = False
        for hi in sorted(owned, key=lambda m: (-len(owned[m]), m)):
            for lo in sorted(owned, key=lambda m: (len(owned[m]), m)):
                if len(owned[hi]) - len(owned[lo]) <= 1:
                    break
                movable = sorted(tp for tp in owned[hi] if tp in eligible[lo])
                if movable:
                    owned[hi].discard(movable[-1])
                    owned[lo].add(movable[-1])
                    moved = True
                    break
            if moved:
                break
    return {m: _to_assignment(ps) for m, ps in owned.items()}


def range_(subscriptions: dict[str, set[str]], metadata: dict[str, tuple[uuid.UUID, int]],
           previous: dict[str, Assignment]) -> dict[str, Assignment]:
    owned: dict[str, set[TopicPartition]] = {m: set() for m in subscriptions}
    for topic in sorted(metadata):
        topic_id, count = metadata[topic]
        members = sorted(m for m, topics in subscriptions.items() if topic in topics)
        if not members:
            continue
        quota, extra = divmod(count, len(members))
        start = 0
        for i, member_id in enumerate(members):
            size = quota + (1 if i < extra else 0)
            owned[member_id].update((topic_id, p) for p in range(start, start + size))
            start += size
    return {m: _to_assignment(ps) for m, ps in owned.items()}


ASSIGNORS: dict[str, Assignor] = {"uniform": uniform, "range": range_}
