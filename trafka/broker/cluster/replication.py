"""Replication in a simulated cluster, as Kafka's ReplicaManager and replica fetchers do it,
in process (docs/cluster.md).

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

from trafka.storage.errors import StorageError
from trafka.storage.log_replica import (append_as_follower, epoch_end_offset, follow_log_start, last_leader_epoch,
                                        truncate_fully_and_start_at, truncate_to)
from trafka.wire import records as rec

log = logging.getLogger("trafka.replication")

REPLICA_FETCH_BYTES = 1 << 20  # Kafka's replica.fetch.max.bytes: per partition per fetch
IDLE_WAIT_S = 0.5  # replica.fetch.wait.max.ms


class Replication:
    def __init__(self, cluster):
        self.cluster = cluster
        self.controller = cluster.controller
        self._wakeup = trio.Event()
        # (topic, partition, replica) -> broker time its log end last reached the leader's
        self.caught_up_ms: dict[tuple[str, int, int], int] = {}
        self._followed: dict[int, tuple[tuple, list]] = {}  # node -> (generations, partitions)
        self._replicated: tuple | None = None
        self._replicated_list: list = []
        self.paused: set[int] = set()  # brokers whose fetchers are held (a test's lagging replica)
        self._rejoined: list[str] = []  # partitions back in sync in this pass, for one log line
        # follower node -> (topic, partition, topic id) its leaders appended to since its last pass
        self._dirty: dict[int, set[tuple[str, int, object]]] = {}
        self._seen_key: dict[int, tuple] = {}  # node -> the generations its last full pass saw
        # (topic, partition, follower) -> the leader epoch it last fetched under: a new epoch means
        # a new leader, whose log it first truncates to (truncate_diverged), as Kafka's fetcher does
        self._fetching_epoch: dict[tuple[str, int, int], int] = {}
        # (topic, partition, follower) -> (the leader's log end, broker time) at its last fetch
        self._last_fetch: dict[tuple[str, int, int], tuple[int, int]] = {}
        # (topic, partition) -> the leader's log end when it became leader (Kafka's
        # leaderEpochStartOffset): a follower joins the ISR only once it has that much
        self.epoch_start_offset: dict[tuple[str, int], int] = {}
        # (topic, partition) -> its high watermark as its leaders have had it: a new leader
        # starts from there, not from what it last heard as a follower
        self.high_watermarks: dict[tuple[str, int], int] = {}

    # --- which partitions -----------------------------------------------------------------

    def _generations(self, node) -> tuple:
        return (node.logs.generation, self.controller.generation)

    def replicated_partitions(self, reference) -> list[tuple[str, int, object]]:
        """(topic, partition, topic id) of every partition with more than one replica."""
        key = self._generations(reference)
        if self._replicated != key:
            found = []
            for name, metadata in reference.logs.topics.items():
                for p in range(metadata.partitions):
                    if len(self.controller.replicas(metadata.topic_id, p)) > 1:
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
        """`node` appended to its log of the partition (PartitionLog.on_append): its followers
        look at it in their next pass, without walking every partition they follow."""
        if self.controller.brokers == 1:
            return
        metadata = node.logs.topics.get(topic)
        if metadata is None:
            return
        replicas = self.controller.replicas(metadata.topic_id, partition)
        if len(replicas) > 1:
            for replica in replicas:
                if replica != node.node_id:
                    self._dirty.setdefault(replica, set()).add((topic, partition, metadata.topic_id))

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
        since the last pass, and those it had not caught up on); whether it copied anything."""
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
            if leader_id == node.node_id:
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

    def _fetch_partition(self, node, leader, name: str, p: int, topic_id) -> bool:
        epoch = self.controller.leader_epoch(topic_id, p)
        key = (name, p, node.node_id)
        if self._fetching_epoch.get(key) != epoch:  # a new leader (or a new start): agree with it first
            self.truncate_diverged(node, name, p, topic_id, leader)
            self._fetching_epoch[key] = epoch
        leader_log = leader.logs.log(name, p)
        follower_log = node.logs.log(name, p)
        start, end = leader_log.log_start_offset, leader_log.log_end_offset
        if (follower_log.log_end_offset == end and follower_log._replicated_to == min(leader_log.high_watermark, end)
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
        follower_log._replicated_to = min(leader_log.high_watermark, follower_log.log_end_offset)
        before = follower_log.log_start_offset
        if follow_log_start(follower_log, start) != before:
            leader.notify_data_arrived()  # a DeleteRecords waiting for the low watermark looks again
        self._note_caught_up(node, leader_log, name, p)
        if not self.controller.in_sync(topic_id, p, node.node_id) and self._may_join_isr(follower_log, leader_log, name, p):
            self.controller.expand_isr(topic_id, p, node.node_id)
            self._rejoined.append(f"{name}-{p}")
            if self.controller.reassignment(topic_id, p) is not None:
                self.cluster.reassignment_caught_up(name, p, topic_id)
                return copied
        self.advance_high_watermark(leader, name, p, topic_id)
        return copied

    def _note_caught_up(self, node, leader_log, name: str, p: int) -> None:
        """Kafka's lastCaughtUpTimeMs: now when the follower reached the leader's log end; the
        previous fetch's time when it reached what the leader's log end was then (a busy
        partition's end moves on between fetches)."""
        key = (name, p, node.node_id)
        reached, now = node.logs.log(name, p).log_end_offset, node.clock.time_ms()
        previous = self._last_fetch.get(key)
        if reached >= leader_log.log_end_offset:
            self.caught_up_ms[key] = now
        elif previous is not None and reached >= previous[0]:
            self.caught_up_ms[key] = max(self.caught_up_ms.get(key, previous[1]), previous[1])
        self._last_fetch[key] = (leader_log.log_end_offset, now)

    def _may_join_isr(self, follower_log, leader_log, name: str, p: int) -> bool:
        """Kafka's isFollowerInSync: the follower reached the leader's high watermark and the
        offset where the current leader epoch began."""
        reached = follower_log.log_end_offset
        return reached >= leader_log.high_watermark and reached >= self.epoch_start_offset.get((name, p), 0)

    def opened(self, node, name: str, p: int, partition_log) -> None:
        """A partition log of `node` was made (each one at start, later ones at first use): on
        the leader it takes the leader's role now (`track`), before anything appends to it or
        reads its high watermark; a follower's batches keep the epochs its leader gave them."""
        metadata = node.logs.topics.get(name)
        if metadata is None or self.controller.leader(metadata.topic_id, p) != node.node_id:
            return
        if self.cluster.building and len(self.controller.replicas(metadata.topic_id, p)) > 1:
            # Its followers are not made yet: the epoch now, the high watermark rule once they are.
            partition_log.leader_epoch = self.controller.leader_epoch(metadata.topic_id, p)
            return
        self.track(node, name, p, metadata.topic_id)

    def track(self, leader, name: str, p: int, topic_id) -> None:
        """The leader's role on its log, as the controller has it now: it stamps the current
        leader epoch, and a replicated one's high watermark is held to what the in-sync replicas
        have (a log opened since start, or just created, has none yet). Applied when the log
        opens (`opened`) and whenever the partition's leadership or replicas change."""
        leader_log = leader.logs.log(name, p)
        state = self.controller.partition(topic_id, p)
        if leader_log.leader_epoch != state.leader_epoch:  # its batches carry the current epoch
            leader_log.leader_epoch = state.leader_epoch
        if len(state.replicas) == 1:
            leader_log._replicated_to = None  # one replica: everything appended is committed
        elif leader_log._replicated_to is None and any(r != leader.node_id for r in state.isr):
            self.advance_high_watermark(leader, name, p, topic_id)

    def became_leader(self, leader, name: str, p: int, topic_id) -> None:
        """`leader` leads the partition from now: it stamps the new epoch, its followers count
        as caught up from now, and its high watermark (what it had as a follower) moves up to
        what its ISR has."""
        state = self.controller.partition(topic_id, p)
        now = leader.clock.time_ms()
        for replica in state.isr:
            self.caught_up_ms[(name, p, replica)] = now
        leader_log = leader.logs.log(name, p)
        self.epoch_start_offset[(name, p)] = leader_log.log_end_offset
        self.track(leader, name, p, topic_id)
        committed = self.high_watermarks.get((name, p))
        if committed is not None and leader_log._replicated_to is not None and leader_log._replicated_to < committed:
            # What it had heard as a follower lags a fetch behind; an in-sync replica has every
            # record below the partition's high watermark, so it never goes back.
            leader_log._replicated_to = min(committed, leader_log.log_end_offset)
        if len(state.replicas) > 1 and leader_log._replicated_to is not None:
            self.advance_high_watermark(leader, name, p, topic_id)  # track() did not just do it

    def advance_high_watermark(self, leader, name: str, p: int, topic_id) -> None:
        """The leader's high watermark moves up to what every live in-sync replica has; it
        never moves back. With the leader alone in sync it is the log end offset, moving with
        each append (`_replicated_to` None)."""
        state = self.controller.partition(topic_id, p)
        leader_log = leader.logs.log(name, p)
        before = leader_log.high_watermark
        followers = [r for r in state.isr if r != leader.node_id and r in self.controller.alive]
        old = leader_log._replicated_to
        if not followers:
            leader_log._replicated_to = None
        else:
            reached = min(self._agreed_end(r, name, p, state.leader_epoch, leader_log) for r in followers)
            reached = min(reached, leader_log.log_end_offset)
            leader_log._replicated_to = reached if old is None else max(old, reached)
            if old is None:  # held back from now: its followers count as caught up from now (Kafka's rule)
                now = leader.clock.time_ms()
                for replica in followers:
                    self.caught_up_ms.setdefault((name, p, replica), now)
        self.high_watermarks[(name, p)] = max(self.high_watermarks.get((name, p), 0), leader_log.high_watermark)
        if leader_log.high_watermark != before:
            self.appended(leader, name, p)  # its followers learn the high watermark at their next pass
            leader.notify_data_arrived()

    def _agreed_end(self, follower: int, name: str, p: int, epoch: int, leader_log) -> int:
        """How far the leader knows `follower` agrees with it: its log end once it fetched under
        the current leader epoch (after cutting what diverged), else no further than the high
        watermark already is. A follower that has not fetched from this leader yet may hold
        another leader's records past the point where they part (Kafka's leader likewise resets
        its followers' log end offsets to unknown when it becomes leader)."""
        follower_end = self.cluster.node(follower).logs.log(name, p).log_end_offset
        if self._fetching_epoch.get((name, p, follower)) != epoch and leader_log._replicated_to is not None:
            return leader_log.high_watermark
        return follower_end  # (a log just opened has no high watermark yet: the replicas' ends are the best word)

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
                try:
                    self._fetch_partition(self.cluster.node(replica), leader, name, p, metadata.topic_id)
                except (StorageError, OSError) as exc:
                    # The write is durable on the leader and will be answered: a replica that
                    # cannot hold it leaves the ISR now, as Kafka's coordinator would wait for.
                    log.error("%s-%d: broker %d cannot copy a coordinator write (%s) and leaves the ISR",
                              name, p, replica, exc)
                    self.controller.shrink_isr(metadata.topic_id, p, replica)
                    self.advance_high_watermark(leader, name, p, metadata.topic_id)

    # --- the ISR --------------------------------------------------------------------------

    def check_isr(self, now: int, lag_max_ms: int) -> None:
        """Followers not caught up for `lag_max_ms` leave the ISR (Kafka's maybeShrinkIsr)."""
        live = self.cluster.live_nodes()
        if not live:
            return
        for name, p, topic_id in self.replicated_partitions(live[0]):
            state = self.controller.partition(topic_id, p)
            if state.leader < 0:
                continue
            leader = self.cluster.node(state.leader)
            leader_end = leader.logs.log(name, p).log_end_offset
            for replica in state.isr:
                if replica == state.leader:
                    continue
                key = (name, p, replica)
                if self.cluster.node(replica).logs.log(name, p).log_end_offset >= leader_end:
                    self.caught_up_ms[key] = now
                    continue
                since = self.caught_up_ms.setdefault(key, now)
                if now - since > lag_max_ms:
                    self.controller.shrink_isr(topic_id, p, replica)
                    log.info("%s-%d: broker %d fell behind for %d ms and left the ISR", name, p, replica, now - since)
                    self.advance_high_watermark(leader, name, p, topic_id)

    def checked_at_epoch(self, node, name: str, p: int) -> None:
        """The node's replica was checked against its leader just now (start-up); its fetcher
        checks again only when the leader epoch moves."""
        metadata = node.logs.topics.get(name)
        if metadata is not None:
            self._fetching_epoch[(name, p, node.node_id)] = self.controller.leader_epoch(metadata.topic_id, p)

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

