"""The controller of a simulated cluster (`cluster.brokers` > 1): where each partition lives.

Kafka's KRaft controller decides, and every broker learns from its metadata log, which brokers
are alive, which brokers hold each partition (its replicas), which of them leads it under which
leader epoch, and which are in sync (the ISR). trafka's simulated cluster runs every broker in
one process, so one `Controller` object plays that part for all of them (docs/cluster.md); it
is not a quorum and does not fail over.

Placement is Kafka's rack-unaware default: the replicas of partition p of a topic are the
brokers `(start + p + j) % N` for j in 0..RF-1, the first of them the preferred leader, with
`start` taken from the topic id (Kafka picks it at random; a topic id is random too). A
partition nothing has happened to is led by its preferred leader, epoch 0, every replica in
sync. What differs from that is stored, keyed by topic id, in `cluster_state.json` in the data
dir, rewritten (atomically) at each change: replica lists not of replication factor 1 by
default placement, and each partition's leader, leader epoch and ISR once they changed.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from trafka.storage.files import atomic_write

log = logging.getLogger("trafka.broker")

STATE_FILE = "cluster_state.json"
NO_LEADER = -1


@dataclass(frozen=True)
class PartitionState:
    replicas: tuple[int, ...]
    leader: int  # NO_LEADER: offline (no live in-sync replica)
    leader_epoch: int
    isr: tuple[int, ...]


@dataclass(frozen=True)
class LeaderChange:
    topic_id: uuid.UUID
    partition: int
    old: int
    new: int
    epoch: int


class Controller:
    def __init__(self, brokers: int, racks: list[str | None], data_dir: Path | None):
        self.brokers = brokers
        self.racks = racks
        self.alive: set[int] = set(range(brokers))
        self._path = Path(data_dir) / STATE_FILE if data_dir is not None else None
        # topic id (hex) -> partition -> replicas, where they differ from RF 1 default placement
        self._assignments: dict[str, dict[int, tuple[int, ...]]] = {}
        # topic id (hex) -> partition -> (leader, epoch, isr), once it changed
        self._leadership: dict[str, dict[int, tuple[int, int, tuple[int, ...]]]] = {}
        # topic id (hex) -> partition -> (target replicas, replicas before): reassignments under way
        self._reassignments: dict[str, dict[int, tuple[tuple[int, ...], tuple[int, ...]]]] = {}
        # Bumped on every change a Metadata answer shows (leaders, replicas, ISR, live brokers).
        self.generation = 0
        if self._path is not None and self._path.exists():
            self._read()

    def _read(self) -> None:
        try:
            state = json.loads(self._path.read_text())
            self._assignments = {
                topic: {int(p): tuple(replicas) for p, replicas in partitions.items()}
                for topic, partitions in state.get("assignments", {}).items()
            }
            self._leadership = {
                topic: {int(p): (int(leader), int(epoch), tuple(isr)) for p, (leader, epoch, isr) in partitions.items()}
                for topic, partitions in state.get("leadership", {}).items()
            }
            self._reassignments = {
                topic: {int(p): (tuple(target), tuple(before)) for p, (target, before) in partitions.items()}
                for topic, partitions in state.get("reassignments", {}).items()
            }
        except (OSError, ValueError, AttributeError, TypeError) as exc:
            log.error("%s is unreadable (%s); every partition is back on its default brokers", self._path, exc)
            self._assignments, self._leadership = {}, {}

    def _write(self) -> None:
        self.generation += 1
        if self._path is None:
            return
        state = {
            "assignments": {t: {str(p): list(r) for p, r in parts.items()} for t, parts in self._assignments.items()},
            "leadership": {t: {str(p): [leader, epoch, list(isr)] for p, (leader, epoch, isr) in parts.items()}
                           for t, parts in self._leadership.items()},
            "reassignments": {t: {str(p): [list(target), list(before)] for p, (target, before) in parts.items()}
                              for t, parts in self._reassignments.items() if parts},
        }
        atomic_write(self._path, json.dumps(state, sort_keys=True))

    # --- placement ---------------------------------------------------------------------------

    def default_replicas(self, topic_id: uuid.UUID, partition: int, replication_factor: int = 1) -> tuple[int, ...]:
        start = topic_id.int % self.brokers
        return tuple((start + partition + j) % self.brokers for j in range(replication_factor))

    def replicas(self, topic_id: uuid.UUID, partition: int) -> tuple[int, ...]:
        stored = self._assignments.get(topic_id.hex)
        if stored is not None and partition in stored:
            return stored[partition]
        return self.default_replicas(topic_id, partition)

    def place(self, topic_id: uuid.UUID, partitions: Iterable[int], replication_factor: int) -> None:
        """Default placement with `replication_factor` replicas for new partitions of a topic."""
        if replication_factor > 1:
            self.assign(topic_id, {p: self.default_replicas(topic_id, p, replication_factor) for p in partitions})

    def assign(self, topic_id: uuid.UUID, assignments: dict[int, tuple[int, ...]]) -> None:
        """Explicit replicas for some partitions of a topic (CreateTopics, CreatePartitions):
        the first is the leader, all in sync (they are empty)."""
        self._assignments.setdefault(topic_id.hex, {}).update({p: tuple(r) for p, r in assignments.items()})
        leadership = self._leadership.get(topic_id.hex, {})
        for p in assignments:
            leadership.pop(p, None)
        self._write()

    def partitions_placed(self, topic_id: uuid.UUID) -> int:
        """How many partitions of the topic have stored replicas (those not RF 1 by default)."""
        return len(self._assignments.get(topic_id.hex, {}))

    def elect_offline(self, partitions: Iterable[tuple[uuid.UUID, int, bool]]) -> list[LeaderChange]:
        """Every offline partition with a live in-sync replica (any live replica with unclean
        election) gets it as leader, epoch + 1 (the process starts; a broker came back)."""
        changes = []
        for topic_id, partition, unclean in partitions:
            state = self.partition(topic_id, partition)
            if state.leader != NO_LEADER:
                continue
            live = [r for r in state.replicas if r in self.alive]
            in_sync = [r for r in live if r in state.isr]
            if in_sync or (unclean and live):
                new = (in_sync or live)[0]
                self._set(topic_id, partition, new, state.leader_epoch + 1, tuple(in_sync) or (new,))
                changes.append(LeaderChange(topic_id, partition, NO_LEADER, new, state.leader_epoch + 1))
        if changes:
            self._write()
        return changes

    def forget(self, topic_id: uuid.UUID) -> None:
        """The topic is deleted: its assignments and leadership go with it."""
        dropped = self._assignments.pop(topic_id.hex, None) is not None
        dropped = self._leadership.pop(topic_id.hex, None) is not None or dropped
        dropped = self._reassignments.pop(topic_id.hex, None) is not None or dropped
        if dropped:
            self._write()
        else:
            self.generation += 1

    def partition(self, topic_id: uuid.UUID, partition: int) -> PartitionState:
        replicas = self.replicas(topic_id, partition)
        changed = self._leadership.get(topic_id.hex, {}).get(partition)
        if changed is None:
            return PartitionState(replicas, replicas[0], 0, replicas)
        leader, epoch, isr = changed
        return PartitionState(replicas, leader, epoch, isr)

    def leader(self, topic_id: uuid.UUID, partition: int) -> int:
        changed = self._leadership.get(topic_id.hex)
        if changed is not None and partition in changed:
            return changed[partition][0]
        return self.replicas(topic_id, partition)[0]

    def leader_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        changed = self._leadership.get(topic_id.hex)
        return changed[partition][1] if changed is not None and partition in changed else 0

    def led_since_a_change(self, node: int) -> list[tuple[uuid.UUID, int, int]]:
        """(topic id, partition, leader epoch) of the partitions `node` leads whose leadership
        changed since they were made (every other partition is at epoch 0)."""
        return [(uuid.UUID(hex=topic), p, epoch) for topic, partitions in self._leadership.items()
                for p, (leader, epoch, _) in partitions.items() if leader == node]

    def in_sync(self, topic_id: uuid.UUID, partition: int, replica: int) -> bool:
        changed = self._leadership.get(topic_id.hex)
        if changed is not None and partition in changed:
            return replica in changed[partition][2]
        return replica in self.replicas(topic_id, partition)

    def _set(self, topic_id: uuid.UUID, partition: int, leader: int, epoch: int, isr: tuple[int, ...]) -> None:
        self._leadership.setdefault(topic_id.hex, {})[partition] = (leader, epoch, tuple(isr))

    # --- what changes leadership -------------------------------------------------------------

    def shrink_isr(self, topic_id: uuid.UUID, partition: int, replica: int) -> PartitionState:
        """A follower fell out of sync (it stopped, or lagged past replica.lag.time.max.ms)."""
        state = self.partition(topic_id, partition)
        if replica in state.isr and replica != state.leader:
            self._set(topic_id, partition, state.leader, state.leader_epoch, tuple(r for r in state.isr if r != replica))
            self._write()
        return self.partition(topic_id, partition)

    def expand_isr(self, topic_id: uuid.UUID, partition: int, replica: int) -> PartitionState:
        """A follower caught up with the leader's log end: it is in sync again."""
        state = self.partition(topic_id, partition)
        if replica not in state.isr and replica in state.replicas:
            isr = tuple(r for r in state.replicas if r in state.isr or r == replica)
            self._set(topic_id, partition, state.leader, state.leader_epoch, isr)
            self._write()
        return self.partition(topic_id, partition)

    def broker_stopped(self, node: int, partitions: Iterable[tuple[uuid.UUID, int, bool]]) -> list[LeaderChange]:
        """Broker `node` is down: it leaves every ISR, and each partition it led elects the
        first live in-sync replica (with `unclean` allowed, any live replica when none is), leader
        epoch + 1; with none the partition is offline. `partitions`: (topic id, partition,
        unclean.leader.election.enable) of every partition."""
        self.alive.discard(node)
        changes = []
        for topic_id, partition, unclean in partitions:
            state = self.partition(topic_id, partition)
            if node not in state.replicas:
                continue
            if state.leader != node:
                if node in state.isr:
                    self._set(topic_id, partition, state.leader, state.leader_epoch,
                              tuple(r for r in state.isr if r != node))
                continue
            remaining = tuple(r for r in state.isr if r != node and r in self.alive)
            new, isr = (remaining[0], remaining) if remaining else (NO_LEADER, state.isr)
            if new == NO_LEADER and unclean:
                live = [r for r in state.replicas if r in self.alive]
                if live:  # an unclean election: what the new leader has is the partition now
                    new, isr = live[0], (live[0],)
            self._set(topic_id, partition, new, state.leader_epoch + 1, isr)
            changes.append(LeaderChange(topic_id, partition, node, new, state.leader_epoch + 1))
        self._write()
        return changes

    def broker_started(self, node: int, partitions: Iterable[tuple[uuid.UUID, int, bool]]) -> list[LeaderChange]:
        """Broker `node` is back: offline partitions it can lead elect it (elect_offline).
        Elsewhere it is a follower out of sync until it catches up (expand_isr)."""
        self.alive.add(node)
        changes = self.elect_offline(partitions)
        self.generation += 1
        return changes

    def elect_preferred(self, topic_id: uuid.UUID, partition: int) -> LeaderChange | None:
        """ElectLeaders (preferred): the first replica leads again if it is alive and in sync.
        None when the election is not needed or not possible (see `preferred_problem`)."""
        state = self.partition(topic_id, partition)
        preferred = state.replicas[0]
        if state.leader == preferred or preferred not in self.alive or preferred not in state.isr:
            return None
        self._set(topic_id, partition, preferred, state.leader_epoch + 1, state.isr)
        self._write()
        return LeaderChange(topic_id, partition, state.leader, preferred, state.leader_epoch + 1)

    def elect(self, topic_id: uuid.UUID, partition: int, leader: int) -> LeaderChange | None:
        """Make a live in-sync replica the leader (a moved leader), epoch + 1; None if it leads."""
        state = self.partition(topic_id, partition)
        if leader == state.leader:
            return None
        if leader not in state.isr or leader not in self.alive:
            raise ValueError(f"broker {leader} is not a live in-sync replica (ISR {list(state.isr)})")
        self._set(topic_id, partition, leader, state.leader_epoch + 1, state.isr)
        self._write()
        return LeaderChange(topic_id, partition, state.leader, leader, state.leader_epoch + 1)

    def elect_unclean(self, topic_id: uuid.UUID, partition: int) -> LeaderChange | None:
        """ElectLeaders (unclean) for an offline partition: its first live replica, in sync or not."""
        state = self.partition(topic_id, partition)
        live = [r for r in state.replicas if r in self.alive]
        if state.leader != NO_LEADER or not live:
            return None
        self._set(topic_id, partition, live[0], state.leader_epoch + 1, (live[0],))
        self._write()
        return LeaderChange(topic_id, partition, NO_LEADER, live[0], state.leader_epoch + 1)

    # --- reassignments ---------------------------------------------------------------------

    def reassignment(self, topic_id: uuid.UUID, partition: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """(target replicas, replicas before) of a reassignment under way, else None."""
        return self._reassignments.get(topic_id.hex, {}).get(partition)

    def reassignments(self) -> dict[str, dict[int, tuple[tuple[int, ...], tuple[int, ...]]]]:
        return self._reassignments

    def reassign(self, topic_id: uuid.UUID, partition: int, target: tuple[int, ...]) -> None:
        """Start moving the partition to `target` (Kafka's AlterPartitionReassignments): the
        replicas are the target followed by the old ones being removed; the new ones start out
        of sync and fetch; `complete_reassignment` finishes once the whole target is in sync."""
        state = self.partition(topic_id, partition)
        under_way = self.reassignment(topic_id, partition)
        before = under_way[1] if under_way else state.replicas
        # Every replica it has now (those a move under way was adding, its leader perhaps,
        # included) stays until the new target is in sync, as Kafka's controller keeps them.
        replicas = tuple(target) + tuple(r for r in state.replicas if r not in target)
        self._reassignments.setdefault(topic_id.hex, {})[partition] = (tuple(target), before)
        self._assignments.setdefault(topic_id.hex, {})[partition] = replicas
        isr = tuple(r for r in replicas if r in state.isr)
        self._set(topic_id, partition, state.leader, state.leader_epoch, isr)
        self._write()

    def cancel_reassignment(self, topic_id: uuid.UUID, partition: int) -> LeaderChange | None:
        """Back to the replicas before (AlterPartitionReassignments with null replicas), the ISR
        cut to them, as Kafka's PartitionReassignmentRevert; the leader change it made, if any.
        LookupError when none is under way; ValueError when no replica from before is in sync
        (going back would need an unclean election, which Kafka refuses too)."""
        under_way = self.reassignment(topic_id, partition)
        if under_way is None:
            raise LookupError("no reassignment is under way")
        before = under_way[1]
        state = self.partition(topic_id, partition)
        isr = tuple(r for r in before if r in state.isr)
        if not isr:
            raise ValueError(f"cannot go back to replicas {list(before)}: none is in sync, so it would "
                             "need an unclean leader election")
        del self._reassignments[topic_id.hex][partition]
        self._assignments.setdefault(topic_id.hex, {})[partition] = before
        change = None
        if state.leader in before:
            self._set(topic_id, partition, state.leader, state.leader_epoch, isr)
        else:
            new = next((r for r in isr if r in self.alive), NO_LEADER)
            change = LeaderChange(topic_id, partition, state.leader, new, state.leader_epoch + 1)
            self._set(topic_id, partition, new, state.leader_epoch + 1, isr)
        self._write()
        return change

    def complete_reassignment(self, topic_id: uuid.UUID, partition: int) -> LeaderChange | None | bool:
        """Finish a reassignment whose target is all in sync: the replicas become the target,
        and a leader outside it hands over to the first in-sync target replica. False when it
        cannot finish yet; else the leader change it made, if any."""
        under_way = self.reassignment(topic_id, partition)
        if under_way is None:
            return False
        target = under_way[0]
        state = self.partition(topic_id, partition)
        if not all(r in state.isr for r in target):
            return False
        del self._reassignments[topic_id.hex][partition]
        self._assignments.setdefault(topic_id.hex, {})[partition] = target
        isr = tuple(r for r in target if r in state.isr)
        change = None
        if state.leader not in target:
            new = next((r for r in target if r in self.alive), NO_LEADER)
            change = LeaderChange(topic_id, partition, state.leader, new, state.leader_epoch + 1)
            self._set(topic_id, partition, new, state.leader_epoch + 1, isr)
        else:
            self._set(topic_id, partition, state.leader, state.leader_epoch, isr)
        self._write()
        return change

    def validate_replicas(self, replicas) -> str | None:
        """Why an explicit assignment cannot be used, or None."""
        replicas = list(replicas)
        if not replicas:
            return "an assignment names no broker"
        if len(set(replicas)) != len(replicas):
            return f"an assignment names a broker twice: {replicas}"
        unknown = [r for r in replicas if not 0 <= r < self.brokers]
        if unknown:
            return f"brokers {unknown} do not exist (this cluster has brokers 0-{self.brokers - 1})"
        return None
