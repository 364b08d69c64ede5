"""One replica of a partition on one broker, as Kafka's Partition: what its broker knows and does
as the partition's leader or as a follower (docs/cluster.md).

The controller decides who leads under which epoch and who is in sync (controller.py); the
replica applies it (`make_leader`, `apply_leadership`) and keeps what only a replica knows:
- as leader: where its leader epoch began (Kafka's leaderEpochStartOffset: a follower joins the
  ISR only once it has that much), and each follower as the leader sees it (`RemoteReplica`:
  when it last caught up, what the leader's log end was at its last fetch);
- as follower: the leader epoch it last fetched under (a new one means a new leader, whose log
  it first truncates to).
Its log (storage's PartitionLog) holds the records, the leader epochs of its batches (the epoch
cache), the log start offset and the high watermark, which the leader holds to what its in-sync
replicas have (`PartitionLog.update_high_watermark`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RemoteReplica:
    """A follower as its leader sees it (Kafka's Replica)."""

    caught_up_ms: int | None = None  # when its log end last reached the leader's (lastCaughtUpTimeMs)
    last_fetch: tuple[int, int] | None = None  # (the leader's log end, broker time) at its last fetch


class Partition:
    def __init__(self, replication, node, topic: str, index: int, topic_id):
        self.replication = replication
        self.controller = replication.controller
        self.node = node
        self.topic = topic
        self.index = index
        self.topic_id = topic_id
        self.leader_epoch_start_offset = 0  # as leader: its log end when it became leader
        self.fetched_epoch: int | None = None  # as follower: the leader epoch it last fetched under
        self.remote: dict[int, RemoteReplica] = {}  # as leader: its followers

    def __repr__(self) -> str:
        return f"Partition({self.topic}-{self.index} on broker {self.node.node_id})"

    @property
    def log(self):
        return self.node.logs.log(self.topic, self.index)

    @property
    def state(self):
        """The controller's word on the partition: replicas, leader, leader epoch, ISR."""
        return self.controller.partition(self.topic_id, self.index)

    def remote_replica(self, replica: int) -> RemoteReplica:
        found = self.remote.get(replica)
        if found is None:
            found = self.remote[replica] = RemoteReplica()
        return found

    # --- the leader's role ----------------------------------------------------------------------

    def make_leader(self) -> None:
        """The controller made this replica the leader (Kafka's makeLeader): it stamps the new
        epoch, its epoch starts at its log end, its in-sync followers count as caught up from
        now, and its high watermark (what it had as a follower) moves up to what its ISR has,
        never below the partition's."""
        state = self.state
        now = self.node.clock.time_ms()
        for replica in state.isr:
            self.remote_replica(replica).caught_up_ms = now
        leader_log = self.log
        self.leader_epoch_start_offset = leader_log.log_end_offset
        self.apply_leadership()
        committed_here = self.replication.committed.get(self.topic_id, {})
        committed = committed_here.get(self.index)
        if committed is not None and committed > leader_log.log_end_offset:
            # An unclean election: what this leader has is the partition now, and what the old
            # leaders committed past it is gone (a later leader's high watermark would
            # otherwise jump to it past what its in-sync replicas have).
            committed = committed_here[self.index] = leader_log.log_end_offset
        held = leader_log.high_watermark_hold
        if committed is not None and held is not None and held < committed:
            # What it had heard as a follower lags a fetch behind; an in-sync replica has every
            # record below the partition's high watermark, so it never goes back.
            leader_log.update_high_watermark(min(committed, leader_log.log_end_offset))
        if len(state.replicas) > 1 and leader_log.high_watermark_hold is not None:
            self.maybe_advance_high_watermark()  # apply_leadership did not just do it

    def apply_leadership(self) -> None:
        """The leader's role on its log as the controller has it now: the current leader epoch
        on the batches it writes, and a replicated partition's high watermark held to what the
        in-sync replicas have (a log opened since start, or just made, holds none yet). When
        the log opens and whenever the partition's leadership or replicas change."""
        leader_log = self.log
        state = self.state
        if leader_log.leader_epoch != state.leader_epoch:
            leader_log.leader_epoch = state.leader_epoch
        if len(state.replicas) == 1:
            leader_log.update_high_watermark(None)  # one replica: everything appended is committed
        elif leader_log.high_watermark_hold is None and any(r != self.node.node_id for r in state.isr):
            self.maybe_advance_high_watermark()

    def maybe_advance_high_watermark(self) -> None:
        """The high watermark moves up to what every live in-sync replica has; it never moves
        back. With the leader alone in sync it is the log end offset, moving with each append
        (no hold)."""
        state = self.state
        leader_log = self.log
        before = leader_log.high_watermark
        followers = [r for r in state.isr if r != self.node.node_id and r in self.controller.alive]
        old = leader_log.high_watermark_hold
        if not followers:
            leader_log.update_high_watermark(None)
        else:
            reached = min(self._agreed_end(r, state.leader_epoch) for r in followers)
            reached = min(reached, leader_log.log_end_offset)
            leader_log.update_high_watermark(reached if old is None else max(old, reached))
            if old is None:  # held back from now: its followers count as caught up from now (Kafka's rule)
                now = self.node.clock.time_ms()
                for replica in followers:
                    remote = self.remote_replica(replica)
                    if remote.caught_up_ms is None:
                        remote.caught_up_ms = now
        committed = self.replication.committed.setdefault(self.topic_id, {})
        committed[self.index] = max(committed.get(self.index, 0), leader_log.high_watermark)
        if leader_log.high_watermark != before:
            self.replication.appended(self.node, self.topic, self.index)  # followers learn it at their next pass
            self.node.notify_data_arrived()

    def _agreed_end(self, follower: int, epoch: int) -> int:
        """How far the leader knows `follower` agrees with it: its log end once it fetched under
        the current leader epoch (after cutting what diverged), else no further than the high
        watermark already is. A follower that has not fetched from this leader yet may hold
        another leader's records past the point where they part (Kafka's leader likewise resets
        its followers' log end offsets to unknown when it becomes leader)."""
        replica = self.replication.partition(self.replication.cluster.node(follower), self.topic, self.index,
                                             self.topic_id)
        if replica.fetched_epoch != epoch and self.log.high_watermark_hold is not None:
            return self.log.high_watermark
        return replica.log.log_end_offset  # (a log just opened has no hold yet: the replicas' ends are the best word)

    def note_caught_up(self, follower: int, reached: int) -> None:
        """Kafka's lastCaughtUpTimeMs after a fetch that left the follower at `reached`: now when
        it reached the leader's log end; the previous fetch's time when it reached what the
        leader's log end was then (a busy partition's end moves on between fetches)."""
        remote = self.remote_replica(follower)
        leader_end, now = self.log.log_end_offset, self.node.clock.time_ms()
        previous = remote.last_fetch
        if reached >= leader_end:
            remote.caught_up_ms = now
        elif previous is not None and reached >= previous[0]:
            remote.caught_up_ms = max(remote.caught_up_ms if remote.caught_up_ms is not None else previous[1],
                                      previous[1])
        remote.last_fetch = (leader_end, now)

    def is_follower_in_sync(self, reached: int) -> bool:
        """Kafka's isFollowerInSync: a follower whose log end is `reached` has the leader's high
        watermark and the offset where the current leader epoch began."""
        return reached >= self.log.high_watermark and reached >= self.leader_epoch_start_offset
