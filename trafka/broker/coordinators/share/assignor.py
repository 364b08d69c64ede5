"""The share groups' assignor, Kafka's SimpleAssignor (KIP-932).

It gets the members in order with their subscribed topic names, the subscribed topics'
metadata (name -> (topic id, partition count), existing topics only) and each member's previous
assignment, and returns every member's new one: {topic id: frozenset of partitions}.

- Balance first: with M members over P partitions, each partition goes to ceil(M / P) members
  (several only when members outnumber partitions) and the members' counts differ by one at
  most; which members take one more follows their order, as Kafka's member indices do.
- Then stickiness: a member keeps what it held where balance allows, so a member joining or
  leaving moves only the partitions balance needs.
- When all members subscribe to the same topics their partitions are balanced together
  (SimpleHomogeneousAssignmentBuilder); otherwise topic by topic, over the members subscribed
  to each (SimpleHeterogeneousAssignmentBuilder).

The steps are Kafka's: drop what is no longer assignable, take partitions from members over
their count, take members from partitions shared more than wanted, then hand the partitions
short of members to the members short of partitions in turn. Where Kafka's order is a hash
set's, trafka picks: an over-full member gives up first the partitions others hold too, an
over-shared partition loses the members holding the most. Like Kafka, a partition that only members
already holding it could take is left short in Kafka (a slight imbalance it tolerates);
trafka then swaps: such a member takes a partition from another member, which takes this one,
so every partition is held by its share.
"""

from __future__ import annotations

import uuid

Assignment = dict[uuid.UUID, frozenset[int]]
TopicPartition = tuple[uuid.UUID, int]


def assign(subscriptions: dict[str, tuple[str, ...]], topics: dict[str, tuple[uuid.UUID, int]],
           previous: dict[str, Assignment]) -> dict[str, Assignment]:
    """The new assignment of every member of `subscriptions` (in member order)."""
    members = list(subscriptions)
    held: dict[str, set[TopicPartition]] = {
        m: {(t, p) for t, ps in previous.get(m, {}).items() for p in ps} for m in members}
    result: dict[str, set[TopicPartition]] = {m: set() for m in members}
    if len({frozenset(s) for s in subscriptions.values()}) <= 1:
        groups = [(members, _partitions(topics, next(iter(subscriptions.values()), ())))]
    else:
        groups = [([m for m in members if name in subscriptions[m]], _partitions(topics, (name,)))
                  for name in sorted({n for s in subscriptions.values() for n in s})]
    for subscribed, targets in groups:
        for member, taken in _balance(targets, subscribed, held).items():
            result[member] |= taken
    return {m: _to_assignment(partitions) for m, partitions in result.items()}


def _partitions(topics: dict[str, tuple[uuid.UUID, int]], names) -> list[TopicPartition]:
    return [(topics[n][0], p) for n in sorted(set(names)) if n in topics for p in range(topics[n][1])]


def _balance(targets: list[TopicPartition], members: list[str],
             held: dict[str, set[TopicPartition]]) -> dict[str, set[TopicPartition]]:
    """`targets` over `members`, keeping what each held of them where balance allows."""
    if not targets or not members:
        return {m: set() for m in members}
    sharing = -(-len(members) // len(targets))
    slots = sharing * len(targets)
    # Member i wants ceil(slots*(i+1)/M) - ceil(slots*i/M): the slots spread, the extra ones by order.
    desired = {m: -(-slots * (i + 1) // len(members)) - -(-slots * i // len(members)) for i, m in enumerate(members)}
    wanted = set(targets)
    kept = {m: sorted(held.get(m, set()) & wanted) for m in members}
    holders: dict[TopicPartition, list[str]] = {tp: [] for tp in targets}
    for m in members:
        for tp in kept[m]:
            holders[tp].append(m)
    for m in members:  # over-full: give up first what others hold too
        while len(kept[m]) > desired[m]:
            tp = max(kept[m], key=lambda tp: (len(holders[tp]), tp))
            kept[m].remove(tp)
            holders[tp].remove(m)
    for tp, who in holders.items():  # over-shared: the members holding the most let go
        while len(who) > sharing:
            drop = max(who, key=lambda m: (len(kept[m]) - desired[m], len(kept[m]), members.index(m)))
            who.remove(drop)
            kept[drop].remove(tp)
    unfilled = [m for m in members if len(kept[m]) < desired[m]]
    turn = 0
    for tp in targets:
        who, skipped = holders[tp], 0
        while len(who) < sharing and unfilled and skipped < len(unfilled):
            turn %= len(unfilled)
            member = unfilled[turn]
            if member in who:  # a member takes a partition once
                turn, skipped = turn + 1, skipped + 1
                continue
            who.append(member)
            kept[member].append(tp)
            skipped = 0
            if len(kept[member]) >= desired[member]:
                unfilled.pop(turn)
            else:
                turn += 1
    _swap_into_short_partitions(targets, sharing, desired, kept, holders, unfilled)
    return {m: set(kept[m]) for m in members}


def _swap_into_short_partitions(targets, sharing, desired, kept, holders, unfilled) -> None:
    """A partition still short of members where every member short of partitions holds it
    already: such a member takes another's partition q, and that other takes this one."""
    for tp in targets:
        who = holders[tp]
        for short in [m for m in unfilled if m in who]:
            if len(who) >= sharing:
                break
            swap = next(((v, q) for q in targets if q != tp and short not in holders[q]
                         for v in holders[q] if v not in who), None)
            if swap is None:
                continue
            other, q = swap
            holders[q].remove(other)
            holders[q].append(short)
            kept[other].remove(q)
            kept[other].append(tp)
            kept[short].append(q)
            who.append(other)
            if len(kept[short]) >= desired[short]:
                unfilled.remove(short)


def _to_assignment(partitions: set[TopicPartition]) -> Assignment:
    out: dict[uuid.UUID, set[int]] = {}
    for topic_id, p in partitions:
        out.setdefault(topic_id, set()).add(p)
    return {topic_id: frozenset(ps) for topic_id, ps in out.items()}
