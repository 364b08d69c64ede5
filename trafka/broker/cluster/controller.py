"""The controller: where each partition lives, on one broker (a cluster of one) or in a simulated
cluster of several (`cluster.brokers`).

Kafka's KRaft controller decides, and every broker learns from its metadata log, which brokers
are alive, which brokers hold each partition (its replicas), which of them leads it under which
leader epoch, and which are in sync (the ISR). trafka's simulated cluster runs every broker in
one process, so one `Controller` object plays that part for all of them (docs/cluster.md); it
is not a quorum and does not fail over.

Placement is Kafka's rack-unaware default: the replicas of partition p of a topic are the
brokers `(start + p + j) % N` for j in 0..RF-1, the first of them the preferred leader, with
`start` taken from the topic id (Kafka picks it at random; a topic id is random too). A
partition nothing has happened to is led by its preferred leader, epoch 0, every replica in
sync. What differs from that is kept as Kafka keeps it, in the metadata log
(trafka/broker/metadata/image.py): a PartitionRecord per partition a change touched (its
replicas where they are not the default placement's, its leader, leader epoch and ISR once they
changed, the target and original replicas of a reassignment under way), and a RemoveTopicRecord
when its topic goes (written by the topic's deletion, trafka/broker/metadata/topics.py). A change
is worked out on the maps below and written, one batch, before anything can read it (the
methods are synchronous: no other task runs between); a failed write puts the maps back as the
log has them and raises.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from dataclasses import dataclass
from typing import Iterable

from trafka.broker.metadata.image import ClusterMetadata
from trafka.broker.metadata.records import MetadataRecord, new_partition_record, partition_ids

log = logging.getLogger("trafka.broker")

NO_LEADER = -1


def describe_ids(node_ids) -> str:
    """`broker 0` or `brokers 0-2`, for error messages."""
    ids = sorted(node_ids)
    if len(ids) == 1:
        return f"broker {ids[0]} only"
    return f"brokers {ids[0]}-{ids[-1]}" if ids == list(range(ids[0], ids[-1] + 1)) else f"brokers {ids}"


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
    def __init__(self, node_ids: list[int], racks: dict[int, str | None], metadata: ClusterMetadata | None):
        """`node_ids`: the brokers, in placement order (0..N-1 in a simulated cluster; a broker on
        its own is a cluster of one under its `node.id`); `racks`: each one's rack or None."""
        self.node_ids = list(node_ids)
        self.brokers = len(self.node_ids)
        self.racks = racks
        self.alive: set[int] = set(self.node_ids)
        # The cluster's metadata log (None: in memory only, a controller built alone in a test).
        self._metadata = metadata
        # topic id (hex) -> partition -> replicas, where they differ from RF 1 default placement
        self._assignments: dict[str, dict[int, tuple[int, ...]]] = {}
        # topic id (hex) -> partition -> (leader, epoch, isr), once it changed
        self._leadership: dict[str, dict[int, tuple[int, int, tuple[int, ...]]]] = {}
        # topic id (hex) -> partition -> (target replicas, replicas before): reassignments under way
        self._reassignments: dict[str, dict[int, tuple[tuple[int, ...], tuple[int, ...]]]] = {}
        # Bumped on every change a Metadata answer shows (leaders, replicas, ISR, live brokers).
        self.generation = 0
        # (topic id hex, partition) -> the PartitionRecord fields the log has for it
        self._persisted: dict[tuple[str, int], dict] = {}
        # (topic id hex, partition) the maps changed for since the last write: what it compares
        self._touched: set[tuple[str, int]] = set()
        # (topic id, partition) -> its PartitionState as the maps give it: every Produce and
        # Fetch asks, so it is worked out once per change (`_changed` empties it)
        self._states: dict[tuple[uuid.UUID, int], PartitionState] = {}
        # (topic id, partition) -> (its state before, its state after) of the write under way:
        # the partitions half of the delta the brokers apply (`take_delta`, cluster/publisher.py)
        self._delta: dict[tuple[uuid.UUID, int], tuple[PartitionState, PartitionState]] = {}
        if self._metadata is not None:
            self._metadata.register(["PartitionRecord", "RemoveTopicRecord"], self._replay, placed_only=True)

    def _replay(self, record: MetadataRecord) -> None:
        """A PartitionRecord or RemoveTopicRecord: at start, and after each write (when the maps
        hold it already)."""
        if record.new_partition:  # a partition made (CreateTopics): nothing to do unless the maps hold it
            ids = partition_ids(record.key())
            if ids is not None and not self._holds(*ids):
                return
        self._states.clear()
        topic = record.fields["topic_id"]
        if record.type == "RemoveTopicRecord":
            for state in (self._assignments, self._leadership, self._reassignments):
                state.pop(topic, None)
            for key in [k for k in self._persisted if k[0] == topic]:
                del self._persisted[key]
            self.generation += 1  # the topic's partitions are gone from Metadata answers
            return
        f = record.fields
        p = int(f["partition_id"])
        self._persisted[(topic, p)] = dict(f)
        self._put(self._assignments, topic, p, None if f["replicas"] is None else tuple(f["replicas"]))
        self._put(self._leadership, topic, p,
                  None if f["leader"] is None else (int(f["leader"]), int(f["leader_epoch"]), tuple(f["isr"])))
        self._put(self._reassignments, topic, p, None if f["target_replicas"] is None
                  else (tuple(f["target_replicas"]), tuple(f["original_replicas"])))
        if (topic, p) in self._persisted and all(f[k] is None for k in ("replicas", "leader", "target_replicas")):
            del self._persisted[(topic, p)]

    def _holds(self, topic: str, partition: int) -> bool:
        """Whether the maps or the persisted records have anything for the partition."""
        return ((topic, partition) in self._persisted
                or any(partition in state.get(topic, ()) for state in (self._assignments, self._leadership,
                                                                         self._reassignments)))

    @staticmethod
    def _put(state: dict, topic: str, partition: int, value) -> None:
        if value is None:
            parts = state.get(topic)
            if parts is not None:
                parts.pop(partition, None)
                if not parts:
                    del state[topic]
        else:
            state.setdefault(topic, {})[partition] = value

    def _fields(self, key: tuple[str, int]) -> dict | None:
        """A partition's PartitionRecord fields as the maps hold them now (None: as new)."""
        topic, p = key
        replicas = self._assignments.get(topic, {}).get(p)
        leadership = self._leadership.get(topic, {}).get(p)
        moving = self._reassignments.get(topic, {}).get(p)
        if replicas is None and leadership is None and moving is None:
            return None
        return {
            "topic_id": topic, "partition_id": p, "replicas": None if replicas is None else list(replicas),
            "leader": None if leadership is None else leadership[0],
            "leader_epoch": None if leadership is None else leadership[1],
            "isr": None if leadership is None else list(leadership[2]),
            "target_replicas": None if moving is None else list(moving[0]),
            "original_replicas": None if moving is None else list(moving[1]),
        }

    def _write(self) -> None:
        """Write what the maps changed since the last write, as one batch (see the module doc):
        the partitions touched since then, each compared with what the log has for it. Only a
        written change is one Metadata answers show (the generation moves after the write)."""
        touched, self._touched = sorted(self._touched), set()
        if self._metadata is None:
            self._changed()
            return
        records = []
        # A partition back as new gets a PartitionRecord of nulls (never a RemoveTopicRecord: the
        # topic and its partitions stay; only `forget` removes a topic).
        for key in touched:
            now, before = self._fields(key), self._persisted.get(key)
            if before == now:
                continue
            topic_id = uuid.UUID(hex=key[0])
            self._delta[(topic_id, key[1])] = (self._state(topic_id, key[1], before), self._state(topic_id, key[1], now))
            records.append(MetadataRecord("PartitionRecord", now) if now else new_partition_record(*key))
        try:
            self._metadata.write(records)
        except BaseException:
            self._delta.clear()
            self._restore()
            raise
        self._changed()

    def stated_partitions(self) -> list[tuple[uuid.UUID, int]]:
        """(topic id, partition) of every partition the metadata log gives a state of its own
        (the others are as new: led by their one replica at epoch 0)."""
        return [(uuid.UUID(hex=topic), p) for topic, p in self._persisted]

    def take_delta(self) -> dict[tuple[uuid.UUID, int], tuple[PartitionState, PartitionState]]:
        """The partitions the write under way changes: (topic id, partition) -> (state before,
        state after), what a broker compares to see what it now leads, follows or no longer holds."""
        delta, self._delta = self._delta, {}
        return delta

    def _state(self, topic_id: uuid.UUID, partition: int, fields: dict | None) -> PartitionState:
        """A partition's state as PartitionRecord fields give it (None: as new)."""
        replicas = (self.default_replicas(topic_id, partition) if fields is None or fields["replicas"] is None
                    else tuple(fields["replicas"]))
        if fields is None or fields["leader"] is None:
            return PartitionState(replicas, replicas[0], 0, replicas)
        return PartitionState(replicas, int(fields["leader"]), int(fields["leader_epoch"]), tuple(fields["isr"]))

    def _restore(self) -> None:
        """The maps as the metadata log has them (after a failed write)."""
        self._states.clear()
        self._touched.clear()
        persisted = list(self._persisted.values())
        self._assignments, self._leadership, self._reassignments, self._persisted = {}, {}, {}, {}
        for fields in persisted:
            self._replay(MetadataRecord("PartitionRecord", fields))

    # --- placement ---------------------------------------------------------------------------

    def default_replicas(self, topic_id: uuid.UUID, partition: int, replication_factor: int = 1) -> tuple[int, ...]:
        start = topic_id.int % self.brokers
        if replication_factor == 1:  # every partition of a topic placed by default
            return (self.node_ids[(start + partition) % self.brokers],)
        return tuple(self.node_ids[(start + partition + j) % self.brokers] for j in range(replication_factor))

    def replicas(self, topic_id: uuid.UUID, partition: int) -> tuple[int, ...]:
        return self.partition(topic_id, partition).replicas

    def _stored_replicas(self, topic_id: uuid.UUID, partition: int) -> tuple[int, ...]:
        stored = self._assignments.get(topic_id.hex)
        if stored is not None and partition in stored:
            return stored[partition]
        return self.default_replicas(topic_id, partition)

    def place(self, topic_id: uuid.UUID, partitions: Iterable[int], replication_factor: int) -> None:
        """Default placement with `replication_factor` replicas for new partitions of a topic.
        Brokers that are down come last, as Kafka's StripedReplicaPlacer takes fenced brokers
        only once the unfenced ones are used up, so the preferred leader is a live broker."""
        if replication_factor == 1 and self.alive == set(self.node_ids):
            return  # each on its default broker, led by it: nothing to store
        placed = {}
        for p in partitions:
            replicas = self.default_replicas(topic_id, p, replication_factor)
            if replication_factor == 1:
                if replicas[0] in self.alive:
                    continue
                start = self.node_ids.index(replicas[0])
                replicas = tuple(self.node_ids[(start + j) % self.brokers] for j in range(self.brokers))
            ordered = tuple(r for r in replicas if r in self.alive) + tuple(r for r in replicas if r not in self.alive)
            placed[p] = ordered[:replication_factor]
        if placed:
            self.assign(topic_id, placed)

    def assign(self, topic_id: uuid.UUID, assignments: dict[int, tuple[int, ...]]) -> None:
        """Explicit replicas for some partitions of a topic (CreateTopics, CreatePartitions):
        they are empty, so the live ones are in sync and the first of those leads; a broker
        that is down is out of sync until it has started and caught up (Kafka's controller
        makes the ISR of a new partition its unfenced replicas). `fenced_assignment` says
        when none is live."""
        self._assignments.setdefault(topic_id.hex, {}).update({p: tuple(r) for p, r in assignments.items()})
        leadership = self._leadership.get(topic_id.hex, {})
        for p, replicas in assignments.items():
            leadership.pop(p, None)
            isr = tuple(r for r in replicas if r in self.alive)
            if isr != tuple(replicas) and isr:
                self._set(topic_id, p, isr[0], 0, isr)
            self._touched.add((topic_id.hex, p))
        self._write()

    def fenced_assignment(self, replicas) -> str | None:
        """Why a new partition cannot have these replicas when none of them is alive, or None."""
        if any(r in self.alive for r in replicas):
            return None
        return (f"All brokers specified in the partition assignment ({list(replicas)}) are fenced or in "
                "controlled shutdown.")

    def default_layout(self, topic_id: uuid.UUID) -> int | None:
        """Where the topic's default placement starts, when nothing about it differs from that
        (one replica each, led by it at epoch 0): topics alike in this and their partition
        count have alike partitions. None when it has its own replicas or leadership."""
        key = topic_id.hex
        if self._assignments.get(key) or self._leadership.get(key):
            return None
        return topic_id.int % self.brokers

    def placed(self, topic_id: uuid.UUID) -> dict[int, tuple[int, ...]]:
        """The topic's partitions with stored replicas (those not RF 1 by default) -> replicas."""
        return self._assignments.get(topic_id.hex, {})

    def partitions_placed(self, topic_id: uuid.UUID) -> int:
        """How many partitions of the topic have stored replicas (those not RF 1 by default)."""
        return len(self._assignments.get(topic_id.hex, {}))

    def elect_offline(self, partitions: Iterable[tuple[uuid.UUID, int, bool]]) -> list[LeaderChange]:
        """Every offline partition with a live in-sync replica (any live replica with unclean
        election) gets it as leader, epoch + 1 (the process starts; a broker came back)."""
        changes = []
        for topic_id, partition, unclean in partitions:
            if partition not in self._leadership.get(topic_id.hex, ()):
                continue  # led as placed (its first replica, epoch 0): never offline
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
        for state in (self._assignments, self._leadership, self._reassignments):
            state.pop(topic_id.hex, None)
        self._changed()
        if any(topic == topic_id.hex for topic, _ in self._persisted) and self._metadata is not None:
            # Normally written already, by the DeleteTopics that removed the topic (its replay
            # emptied these maps); a controller driven alone writes it here.
            try:
                self._metadata.write([MetadataRecord("RemoveTopicRecord", {"topic_id": topic_id.hex})])
            except BaseException:
                self._restore()
                raise

    def _changed(self) -> None:
        """Something a Metadata answer shows changed (the maps, or the live brokers)."""
        self.generation += 1
        self._states.clear()

    def partition(self, topic_id: uuid.UUID, partition: int) -> PartitionState:
        state = self._states.get((topic_id, partition))
        if state is None:
            replicas = self._stored_replicas(topic_id, partition)
            changed = self._leadership.get(topic_id.hex, {}).get(partition)
            if changed is None:
                state = PartitionState(replicas, replicas[0], 0, replicas)
            else:
                leader, epoch, isr = changed
                state = PartitionState(replicas, leader, epoch, isr)
            self._states[(topic_id, partition)] = state
        return state

    def leader(self, topic_id: uuid.UUID, partition: int) -> int:
        return self.partition(topic_id, partition).leader

    def leader_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        return self.partition(topic_id, partition).leader_epoch

    def in_sync(self, topic_id: uuid.UUID, partition: int, replica: int) -> bool:
        return replica in self.partition(topic_id, partition).isr

    def _set(self, topic_id: uuid.UUID, partition: int, leader: int, epoch: int, isr: tuple[int, ...]) -> None:
        self._leadership.setdefault(topic_id.hex, {})[partition] = (leader, epoch, tuple(isr))
        self._touched.add((topic_id.hex, partition))
        self._states.clear()

    # --- what changes leadership -------------------------------------------------------------

    def shrink_isr(self, topic_id: uuid.UUID, partition: int, replica: int) -> PartitionState:
        """A follower fell out of sync (it stopped, or lagged past replica.lag.time.max.ms)."""
        state = self.partition(topic_id, partition)
        if replica in state.isr and replica != state.leader:
            self._set(topic_id, partition, state.leader, state.leader_epoch, tuple(r for r in state.isr if r != replica))
            self._write()
        return self.partition(topic_id, partition)

    def expand_isr(self, topic_id: uuid.UUID, partition: int, replica: int) -> PartitionState:
        """A follower caught up with the leader's log end: it is in sync again. A broker that is
        not alive is not eligible (Kafka's controller refuses a fenced or shutting-down broker,
        KIP-841): what it was seen to have may not be what it has when it starts again."""
        state = self.partition(topic_id, partition)
        if replica not in state.isr and replica in state.replicas and replica in self.alive:
            isr = tuple(r for r in state.replicas if r in state.isr or r == replica)
            self._set(topic_id, partition, state.leader, state.leader_epoch, isr)
            self._write()
        return self.partition(topic_id, partition)

    def broker_stopped(self, node: int, partitions: Iterable[tuple[uuid.UUID, int, bool]]) -> list[LeaderChange]:
        """Broker `node` is down: it leaves every ISR, and each partition it led elects the
        first live in-sync replica (with `unclean` allowed, any live replica when none is), leader
        epoch + 1; with none the partition is offline. `partitions`: (topic id, partition,
        unclean.leader.election.enable) of every partition. Nothing changes unless it is written
        (a failed write leaves the broker alive, and raises)."""
        with self._alive_as(self.alive - {node}):
            return self._broker_stopped(node, partitions)

    def _broker_stopped(self, node: int, partitions) -> list[LeaderChange]:
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
        with self._alive_as(self.alive | {node}):
            changes = self.elect_offline(partitions)
        self._changed()
        return changes

    @contextlib.contextmanager
    def _alive_as(self, alive: set[int]):
        """The live brokers become `alive` for the election inside, and stay so only when what
        it changed was written (a write that raises puts them back)."""
        before, self.alive = self.alive, set(alive)
        try:
            yield
        except BaseException:
            self.alive = before
            self._states.clear()
            raise

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
        """Why an explicit assignment cannot be used, or None (Kafka's controller's words)."""
        replicas = list(replicas)
        if not replicas:
            return "The manual partition assignment includes an empty replica list."
        if len(set(replicas)) != len(replicas):
            return "The manual partition assignment includes duplicate replicas."
        unknown = [r for r in replicas if r not in self.node_ids]
        if unknown:
            return (f"The manual partition assignment includes broker {unknown[0]}, but no broker with that ID is "
                    f"registered (this cluster has {describe_ids(self.node_ids)}).")
        return None
