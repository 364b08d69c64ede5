"""Replication, as Kafka's ReplicaManager and replica fetchers do it, in process (docs/cluster.md):
the replicas (partition.py, one `Partition` per partition and broker) and what moves records
between them. A cluster of one has nothing to copy.

- Each broker runs one fetcher task (`run`) for the partitions it follows: it reads the
  leader's log from its own log end offset (past the high watermark, as a follower's Fetch
  does, but through the read path rather than a socket) and appends the batches unchanged
  (`append_as_follower`: offsets and leader epochs kept). It wakes when any broker appends.
- The leader's high watermark is the lowest log end offset of the in-sync replicas; it only
  moves forward. When it moves the leader's long-polling Fetches and acks=all Produces wake.
- A follower whose log end reached the leader's is caught up at that time (or at its previous
  fetch, when it reached where the leader's end was then: Kafka's lastCaughtUpTimeMs); one not
  caught up for `replica.lag.time.max.ms` (broker time) leaves the ISR (`check_isr`), and
  rejoins once it reached the leader's high watermark and the start of its leader epoch
  (Kafka's isFollowerInSync), not the leader's moving log end.
- Each fetch also tells the follower the leader's high watermark and log start offset (a
  follower's log start follows its leader's, DeleteRecords and retention).
- Coordinators' internal topics are copied to the in-sync followers as they are written
  (`replicate_now`), so a coordinator's state is on every in-sync replica before it answers,
  as Kafka's coordinator runtime waits for the high watermark before it answers; a follower
  that cannot take the copy leaves the ISR instead of failing the durable write.
"""

from __future__ import annotations

import logging

import trio

from trafka.broker.cluster.partition import Partition
from trafka.storage.errors import StorageError
from trafka.storage.log_replica import (append_as_follower, epoch_end_offset, follow_log_start, last_leader_epoch,
                                        truncate_fully_and_start_at, truncate_to)
from trafka.wire import records as rec

log = logging.getLogger("trafka.replication")

# Coordinators' internal topics (copied to their in-sync followers as they are written) and the
# settings that size their replication (capped at the cluster's size).
INTERNAL_REPLICATION = {
    "__consumer_offsets": "offsets.topic.replication.factor",
    "__transaction_state": "transaction.state.log.replication.factor",
    "__share_group_state": "share.coordinator.state.topic.replication.factor",
    "_schemas": "offsets.topic.replication.factor",
}
REPLICA_FETCH_BYTES = 1 << 20  # Kafka's replica.fetch.max.bytes: per partition per fetch
IDLE_WAIT_S = 0.5  # replica.fetch.wait.max.ms


class Replication:
    def __init__(self, cluster):
        self.cluster = cluster
        self.controller = cluster.controller
        self._wakeup = trio.Event()
        # topic -> (broker, partition) -> that broker's replica of the partition
        self._partitions: dict[str, dict[tuple[int, int], Partition]] = {}
        self._followed: dict[int, tuple[tuple, list]] = {}  # node -> (generations, partitions)
        self._replicated: tuple | None = None
        self._replicated_list: list = []
        self.paused: set[int] = set()  # brokers whose fetchers are held (a test's lagging replica)
        # A network partition (the nemesis): (follower, leader) pairs whose replication is cut,
        # and brokers cut from every other and from the controller (no fetch to or from them,
        # and as leaders they cannot shrink an ISR: that goes through the controller).
        self.cut: set[tuple[int, int]] = set()
        self.isolated: set[int] = set()
        self._rejoined: list[str] = []  # partitions back in sync in this pass, for one log line
        # follower node -> (topic, partition, topic id) its leaders appended to since its last pass
        self._dirty: dict[int, set[tuple[str, int, object]]] = {}
        self._seen_key: dict[int, tuple] = {}  # node -> the generations its last full pass saw
        # topic id -> partition -> its high watermark as its leaders have had it: a new leader
        # starts from there, not from what it last heard as a follower (by id: a topic made
        # again under the same name starts with nothing committed)
        self.committed: dict[object, dict[int, int]] = {}

    # --- the replicas ---------------------------------------------------------------------

    def partition(self, node, name: str, p: int, topic_id=None) -> Partition:
        """`node`'s replica of the partition (made at first use; a topic made again under the
        same name gets new ones)."""
        if topic_id is None:
            topic_id = node.logs.topics[name].topic_id
        replicas = self._partitions.get(name)
        if replicas is None:
            replicas = self._partitions[name] = {}
        found = replicas.get((node.node_id, p))
        if found is None or found.topic_id != topic_id or found.node is not node:
            found = replicas[(node.node_id, p)] = Partition(self, node, name, p, topic_id)
        return found

    def forget(self, name: str, topic_id) -> None:
        """The topic is deleted: its replicas and what its leaders committed go with it."""
        self._partitions.pop(name, None)
        self.committed.pop(topic_id, None)

    # --- which partitions -----------------------------------------------------------------

    def _generations(self, node) -> tuple:
        return (node.logs.generation, self.controller.generation)

    def replicated_partitions(self, reference) -> list[tuple[str, int, object]]:
        """(topic, partition, topic id) of every partition with more than one replica."""
        key = self._generations(reference)
        if self._replicated != key:
            found = []
            for name, metadata in reference.logs.topics.items():
                # Only a partition with replicas of its own has more than one (the default
                # placement is one replica): a topic of 5,000 such partitions costs one lookup.
                for p, replicas in sorted(self.controller.placed(metadata.topic_id).items()):
                    if len(replicas) > 1 and p < metadata.partitions:
                        found.append((name, p, metadata.topic_id))
            self._replicated, self._replicated_list = key, found
        return self._replicated_list

    def _followed_key(self, node) -> tuple:
        return self._generations(node)

    def followed(self, node) -> list[tuple[str, int, object]]:
        """The replicated partitions `node` holds and does not lead."""
        key = self._generations(node)
        cached = self._followed.get(node.node_id)
        if cached is None or cached[0] != key:
            found = [(name, p, topic_id) for name, p, topic_id in self.replicated_partitions(node)
                     if node.node_id in self.controller.replicas(topic_id, p)
                     and self.controller.leader(topic_id, p) != node.node_id]
            cached = self._followed[node.node_id] = (key, found)
        return cached[1]

    # --- fetching -------------------------------------------------------------------------

    def data_arrived(self) -> None:
        """Some broker appended: fetchers look again (a cluster of one has no followers to wake)."""
        if self.controller.brokers == 1:
            return
        event, self._wakeup = self._wakeup, trio.Event()
        event.set()

    def appended(self, node, topic: str, partition: int) -> None:
        """`node` appended to its log of the partition as its leader (PartitionLog.on_append):
        its followers look at it in their next pass, without walking every partition they
        follow; a coordinator's write to its internal topic reaches the in-sync followers now,
        before the coordinator applies and answers (Kafka's runtime waits for the high
        watermark)."""
        if self.controller.brokers == 1:
            return
        metadata = node.logs.topics.get(topic)
        if metadata is None:
            return
        state = self.controller.partition(metadata.topic_id, partition)
        if len(state.replicas) > 1:
            for replica in state.replicas:
                if replica != node.node_id:
                    self._dirty.setdefault(replica, set()).add((topic, partition, metadata.topic_id))
            if topic in INTERNAL_REPLICATION and state.leader == node.node_id:
                self.replicate_now(node, topic, partition)

    async def run(self, node) -> None:
        """Broker `node`'s replica fetcher, for as long as the broker serves: a pass over the
        partitions appended to since the last one when woken, over all it follows when idle
        for IDLE_WAIT_S (what an append hook cannot tell: a new leader, a reassignment)."""
        everything = True
        while True:
            wakeup = self._wakeup
            try:
                progressed = node.node_id not in self.paused and self.fetch_once(node, everything=everything)
            except Exception:
                log.exception("broker %d: replica fetcher pass failed; retrying", node.node_id)
                progressed = False
            if progressed:
                everything = False
                await trio.sleep(0)  # let requests in between passes
                continue
            everything = True
            with trio.move_on_after(IDLE_WAIT_S):
                await wakeup.wait()
                everything = False

    def fetch_once(self, node, *, everything: bool = True) -> bool:
        """One pass over the partitions `node` follows (or, not `everything`, those appended to
        since the last pass, and those it had not caught up on); whether it copied anything.
        A stopped broker copies nothing: its logs are closed (Kafka's replica manager shuts its
        fetchers down before its logs), though a pass scheduled before the stop still runs
        once (trio cancels a task at its next checkpoint)."""
        if node.node_id in self.cluster.stopped:
            return False
        progressed = False
        self._rejoined = []
        dirty = self._dirty.pop(node.node_id, set())
        if everything or self._followed_key(node) != self._seen_key.get(node.node_id):
            self._seen_key[node.node_id] = self._followed_key(node)
            partitions = self.followed(node)
        else:
            partitions = dirty
        for name, p, topic_id in partitions:
            leader_id = self.controller.leader(topic_id, p)
            if leader_id < 0 or leader_id not in self.controller.alive:
                continue
            if leader_id == node.node_id or not self.reachable(node.node_id, leader_id):
                continue
            try:
                copied = self._fetch_partition(node, self.cluster.node(leader_id), name, p, topic_id)
                progressed |= copied
                if copied and node.logs.log(name, p).log_end_offset < self.cluster.node(leader_id).logs.log(name, p).log_end_offset:
                    self._dirty.setdefault(node.node_id, set()).add((name, p, topic_id))  # more next pass
            except StorageError as exc:
                log.error("broker %d: cannot replicate %s-%d from broker %d: %s", node.node_id, name, p, leader_id, exc)
        if self._rejoined:
            shown = ", ".join(self._rejoined[:5]) + (f" and {len(self._rejoined) - 5} more" if len(self._rejoined) > 5 else "")
            log.info("broker %d caught up and is in sync again for %s", node.node_id, shown)
        return progressed

    def reachable(self, follower: int, leader: int) -> bool:
        """Whether `follower` can fetch from `leader` (no network partition between them)."""
        return (follower, leader) not in self.cut and follower not in self.isolated and leader not in self.isolated

    def _fetch_partition(self, node, leader, name: str, p: int, topic_id) -> bool:
        """One fetch of `node`'s replica from the leader's (Kafka's processPartitionData, and the
        leader's side of it: updateFollowerFetchState, maybeExpandIsr, the high watermark)."""
        epoch = self.controller.leader_epoch(topic_id, p)
        replica = self.partition(node, name, p, topic_id)
        leading = self.partition(leader, name, p, topic_id)
        if replica.fetched_epoch != epoch:  # a new leader (or a new start): agree with it first
            self.truncate_diverged(node, name, p, topic_id, leader)
            replica.fetched_epoch = epoch
        leader_log = leading.log
        follower_log = replica.log
        start, end = leader_log.log_start_offset, leader_log.log_end_offset
        if (follower_log.log_end_offset == end and follower_log.high_watermark_hold == min(leader_log.high_watermark, end)
                and follower_log.log_start_offset >= start and self.controller.in_sync(topic_id, p, node.node_id)):
            return False  # caught up, in sync, high watermark and log start known (check_isr keeps the time)
        copied = False
        if follower_log.log_end_offset < start:
            truncate_fully_and_start_at(follower_log, start)  # the leader keeps nothing it has: start there
        elif follower_log.log_end_offset > end:
            truncate_to(follower_log, end)  # ahead of the leader's end, its epochs agreeing up to it
        if follower_log.log_end_offset < end:
            data = leader_log.read(follower_log.log_end_offset, REPLICA_FETCH_BYTES, replica=True).to_bytes()
            if data:
                first = next(rec.iter_batches(data))[1].base_offset
                if first < follower_log.log_end_offset == follower_log.log_start_offset:
                    # The leader's log start falls inside this batch (DeleteRecords): the empty
                    # replica starts at the batch instead, as Kafka's follower does.
                    truncate_fully_and_start_at(follower_log, first)
                append_as_follower(follower_log, data)
                copied = True
        # What a Fetch answer tells a follower besides the batches: the high watermark and log start.
        follower_log.update_high_watermark(min(leader_log.high_watermark, follower_log.log_end_offset))
        before = follower_log.log_start_offset
        if follow_log_start(follower_log, start) != before:
            leader.notify_data_arrived()  # a DeleteRecords waiting for the low watermark looks again
        leading.note_caught_up(node.node_id, follower_log.log_end_offset)
        if not self.controller.in_sync(topic_id, p, node.node_id) and leading.is_follower_in_sync(follower_log.log_end_offset):
            # Published at once: the leader holds its high watermark to the new member before
            # anything else is answered (cluster/publisher.py).
            self.controller.expand_isr(topic_id, p, node.node_id)
            self._rejoined.append(f"{name}-{p}")
            if self.controller.reassignment(topic_id, p) is not None:
                self.cluster.reassignment_caught_up(name, p, topic_id)
            return copied
        leading.maybe_advance_high_watermark()
        return copied

    def log_start_moved(self, leader, name: str, p: int) -> None:
        """The leader's log start moved (DeleteRecords): its followers fetch now to learn it."""
        self.appended(leader, name, p)
        self.data_arrived()

    def low_watermark(self, leader, name: str, p: int) -> int:
        """The lowest log start offset of the partition's live replicas (Kafka's
        lowWatermarkIfLeader): what a DeleteRecords answer waits for."""
        topic_id = leader.logs.topics[name].topic_id
        return min(self.cluster.node(r).logs.log(name, p).log_start_offset
                   for r in self.controller.replicas(topic_id, p) if r in self.controller.alive)

    def replicate_now(self, leader, name: str, p: int) -> None:
        """Copy what the leader just wrote to its in-sync followers at once (internal topics)."""
        metadata = leader.logs.topics.get(name)
        if metadata is None:
            return
        state = self.controller.partition(metadata.topic_id, p)
        for replica in state.isr:
            if replica != leader.node_id and replica in self.controller.alive:
                if not self.reachable(replica, leader.node_id):
                    # Cut from its leader: out of the ISR before the write counts (an isolated
                    # leader's coordinators cannot write at all: the nemesis fails their appends).
                    log.warning("%s-%d: broker %d cannot reach leader %d and leaves the ISR", name, p, replica,
                                leader.node_id)
                    self.controller.shrink_isr(metadata.topic_id, p, replica)
                    continue
                try:
                    self._fetch_partition(self.cluster.node(replica), leader, name, p, metadata.topic_id)
                except (StorageError, OSError) as exc:
                    # The write is durable on the leader and will be answered: a replica that
                    # cannot hold it leaves the ISR now, as Kafka's coordinator would wait for.
                    log.error("%s-%d: broker %d cannot copy a coordinator write (%s) and leaves the ISR",
                              name, p, replica, exc)
                    self.controller.shrink_isr(metadata.topic_id, p, replica)

    # --- the ISR --------------------------------------------------------------------------

    def check_isr(self, now: int, lag_max_ms: int) -> None:
        """Followers not caught up for `lag_max_ms` leave the ISR (Kafka's maybeShrinkIsr)."""
        live = self.cluster.live_nodes()
        if not live:
            return
        for name, p, topic_id in self.replicated_partitions(live[0]):
            state = self.controller.partition(topic_id, p)
            if state.leader < 0 or state.leader in self.isolated:
                continue  # an isolated leader's ISR change cannot reach the controller
            leading = self.partition(self.cluster.node(state.leader), name, p, topic_id)
            leader_end = leading.log.log_end_offset
            for replica in state.isr:
                if replica == state.leader:
                    continue
                if replica not in self.controller.alive:
                    # Never in an ISR (a stopped broker leaves them all and joins none); its
                    # logs are closed, so there is nothing of it to compare.
                    self.controller.shrink_isr(topic_id, p, replica)
                    continue
                remote = leading.remote_replica(replica)
                if self.cluster.node(replica).logs.log(name, p).log_end_offset >= leader_end:
                    remote.caught_up_ms = now
                    continue
                if remote.caught_up_ms is None:
                    remote.caught_up_ms = now
                since = remote.caught_up_ms
                if now - since > lag_max_ms:
                    self.controller.shrink_isr(topic_id, p, replica)
                    log.info("%s-%d: broker %d fell behind for %d ms and left the ISR", name, p, replica, now - since)

    def checked_at_epoch(self, node, name: str, p: int) -> None:
        """The node's replica was checked against its leader just now (start-up); its fetcher
        checks again only when the leader epoch moves."""
        metadata = node.logs.topics.get(name)
        if metadata is not None:
            self.partition(node, name, p, metadata.topic_id).fetched_epoch = self.controller.leader_epoch(metadata.topic_id, p)

    def truncate_diverged(self, node, name: str, p: int, topic_id, leader) -> None:
        """A returning follower cuts its log back to where it agrees with the leader, as Kafka's
        fetcher does before it fetches (OffsetForLeaderEpoch, KIP-101 and KIP-279): it asks
        where its last leader epoch ends in the leader's log; when the leader never wrote in
        that epoch, they agree at most up to where the follower's own writes of the epoch the
        leader answered end; and it asks again from there until they agree (each round cuts
        the log shorter)."""
        follower_log = node.logs.log(name, p)
        leader_log = leader.logs.log(name, p)
        current = self.controller.partition(topic_id, p).leader_epoch
        while (last_epoch := last_leader_epoch(follower_log)) is not None:
            floor, end = epoch_end_offset(leader_log, last_epoch, current)
            if end == -1:  # the leader has nothing of that epoch or before: start over from it
                end = leader_log.log_start_offset
            elif floor != last_epoch:
                _, own_end = epoch_end_offset(follower_log, floor, last_epoch)
                end = min(end, own_end if own_end != -1 else follower_log.log_start_offset)
            if end >= follower_log.log_end_offset:
                return
            truncate_to(follower_log, end)
            log.info("%s-%d: broker %d truncated to offset %d, where it agrees with broker %d",
                     name, p, node.node_id, follower_log.log_end_offset, leader.node_id)
            if floor == last_epoch:
                return  # the leader wrote in that epoch too: they agree up to there

