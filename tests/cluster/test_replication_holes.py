"""Acknowledged records a simulated cluster lost, each found from outside (issue #42), driven only
as production drives it: requests through the brokers' handlers, replica fetcher passes, the
broker clock and faults (stop, kill, start, reassignment, elections). What was acknowledged is
recorded here, from the Produce answers, and checked against the brokers' logs; nothing in a
test puts the brokers' state right.

- A follower that rejoins the ISR during a reassignment must hold the leader's high watermark
  at once: an acks=all write answered before that follower has it is lost when the leader dies.
- An unclean election makes what the new leader has the partition: what the old leaders had
  committed must not let a later leader's high watermark pass an in-sync replica's log end.
- A partition made while a broker is stopped must not count that broker in sync: it has an
  empty log, and electing it would truncate every other replica.
"""

from __future__ import annotations

import uuid

import pytest
import trio
from testkit.cluster import call, replicate
from trio.testing import wait_all_tasks_blocked

from trafka.broker.cluster.nodes import Cluster
from trafka.broker.config import BrokerConfig
from trafka.storage.clock import ManualClock
from trafka.wire import records as rec
from trafka.wire.errors import ErrorCode

SETTINGS = {"offsets.topic.num.partitions": 1, "transaction.state.log.num.partitions": 1,
            "share.coordinator.state.topic.num.partitions": 1, "replica.lag.time.max.ms": 10_000}


def open_cluster(data_dir, brokers: int, clock, **settings) -> Cluster:
    values = {"cluster.brokers": brokers, **SETTINGS, **settings}
    return Cluster(data_dir, BrokerConfig.from_sources([f"{k}={v}" for k, v in values.items()], []), clock=clock)


@pytest.fixture
def clock():
    return ManualClock()


class Acked:
    """Every record an acks=all Produce was told is written, by offset, kept outside the brokers."""

    def __init__(self):
        self.values: dict[int, bytes] = {}
        self.errors: list[int] = []

    async def produce(self, broker, topic: str, values: list[bytes], partition: int = 0) -> int:
        batch = rec.encode_batch([rec.Record(None, v, (), 1_700_000_000_000) for v in values])
        answer = await call(broker, 0, 8, {"transactional_id": None, "acks": -1, "timeout_ms": 60_000,
                                           "topic_data": [{"name": topic, "partition_data": [
                                               {"index": partition, "records": batch}]}]})
        part = answer["responses"][0]["partition_responses"][0]
        if part["error_code"] == ErrorCode.NONE:
            for i, v in enumerate(values):
                self.values[part["base_offset"] + i] = v
        else:
            self.errors.append(part["error_code"])
        return part["error_code"]

    def check(self, cluster, topic: str, partition: int = 0) -> None:
        """Every acknowledged record is on the partition's leader, at its offset."""
        leader = cluster.leader_node(topic, partition)
        assert leader is not None, "no leader"
        plog = leader.logs.log(topic, partition)
        stored = {}
        if plog.log_end_offset > plog.log_start_offset:
            data = plog.read(plog.log_start_offset, 1 << 30).to_bytes()
            for pos, header in rec.iter_batches(data):
                for i, r in enumerate(rec.iter_records(data, pos)):
                    stored[header.base_offset + i] = r.value
        lost = sorted(o for o, v in self.values.items() if stored.get(o) != v)
        assert not lost, (f"{len(lost)} of {len(self.values)} acknowledged records lost or changed on broker "
                          f"{leader.node_id} (offsets {lost[0]}..{lost[-1]}, its log end {plog.log_end_offset})")


async def produce_replicated(cluster, acked: Acked, broker, topic: str, vals: list[bytes], partition: int = 0) -> int:
    """An acks=all Produce while the fetchers run: its answer once the in-sync replicas have it."""
    answers = []

    async def produce():
        answers.append(await acked.produce(broker, topic, vals, partition))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(produce)
        await wait_all_tasks_blocked()
        while not answers:
            replicate(cluster)
            broker.notify_data_arrived()
            await wait_all_tasks_blocked()
    return answers[0]


def check_isr(cluster, clock, after_ms: int) -> None:
    """The broker clock moves on and the ISR check runs, as the first running node's task does."""
    clock.advance(after_ms)
    cluster.replication.check_isr(clock.time_ms(), cluster.config["replica.lag.time.max.ms"])


def high_watermark_within_isr(cluster, topic: str, partition: int = 0) -> None:
    """Kafka's rule: the leader's high watermark never passes the log end of a live in-sync replica."""
    state = cluster.describe_partition(topic, partition)
    leader = cluster.leader_node(topic, partition)
    hw = leader.logs.log(topic, partition).high_watermark
    for r in state["isr"]:
        if r in cluster.controller.alive:
            end = cluster.node(r).logs.log(topic, partition).log_end_offset
            assert hw <= end, f"high watermark {hw} passes in-sync broker {r}'s log end {end} ({state})"


async def create_topic(broker, topic: str, *, assignments=None, replication: int = 3, configs=None) -> None:
    answer = await call(broker, 19, 5, {"topics": [{
        "name": topic, "num_partitions": -1 if assignments else 1,
        "replication_factor": -1 if assignments else replication,
        "assignments": [{"partition_index": p, "broker_ids": list(r)} for p, r in (assignments or {}).items()],
        "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}],
        "timeout_ms": 10_000, "validate_only": False})
    assert answer["topics"][0]["error_code"] == ErrorCode.NONE, answer


def values(prefix: str, n: int) -> list[bytes]:
    return [f"{prefix}-{i}".encode() for i in range(n)]


def test_an_acks_all_write_during_a_reassignment_waits_for_the_follower_that_rejoined(tmp_path, clock):
    """4 brokers, the partition on (0, 1, 2); its ISR shrinks to {0}; it is reassigned to
    [3, 0, 1] and broker 1 catches up (ISR {0, 1}). A write after that is acknowledged only once
    broker 1 has it: killing broker 0 then loses nothing."""
    cluster = open_cluster(tmp_path / "c", 4, clock)
    acked = Acked()

    async def main():
        leader = cluster.nodes[0]
        await create_topic(leader, "moving", assignments={0: (0, 1, 2)})
        for b in range(100):
            assert await produce_replicated(cluster, acked, leader, "moving", values(f"a{b}", 10)) == ErrorCode.NONE
        cluster.replication.paused.update({1, 2, 3})
        for b in range(50):  # the followers hold back: the ISR shrinks to {0}, and it goes on alone
            async with trio.open_nursery() as nursery:
                nursery.start_soon(acked.produce, leader, "moving", values(f"b{b}", 10))
                await wait_all_tasks_blocked()
                if b == 0:
                    check_isr(cluster, clock, 11_000)
                    leader.notify_data_arrived()
        assert cluster.describe_partition("moving", 0)["isr"] == [0]
        cluster.reassign("moving", 0, [3, 0, 1])
        cluster.replication.paused.discard(1)
        replicate(cluster)
        assert sorted(cluster.describe_partition("moving", 0)["isr"]) == [0, 1]
        cluster.replication.paused.add(1)  # broker 1 in sync, but not fetching for a moment
        async with trio.open_nursery() as nursery:
            for b in range(20):
                nursery.start_soon(acked.produce, leader, "moving", values(f"c{b}", 10))
            await wait_all_tasks_blocked()
            high_watermark_within_isr(cluster, "moving")
            cluster.stop_broker(0, kill=True)
            await wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()

    try:
        trio.run(main)
        assert cluster.leader_node("moving", 0).node_id == 1
        acked.check(cluster, "moving")
    finally:
        cluster.close()


def test_an_unclean_election_resets_what_the_old_leaders_committed(tmp_path, clock):
    """Broker 2 misses offsets 100-199, then leads uncleanly with 100. Broker 0, back, agrees
    with it at 100 and takes its new records; broker 1 lags at 100 in sync. A clean election of
    broker 0 must hold its high watermark to broker 1's 100, not the 200 committed before the
    unclean election."""
    cluster = open_cluster(tmp_path / "c", 3, clock)
    acked = Acked()

    async def main():
        await create_topic(cluster.nodes[0], "unclean", assignments={0: (0, 1, 2)},
                           configs={"unclean.leader.election.enable": "true"})
        for b in range(10):
            assert await produce_replicated(cluster, acked, cluster.nodes[0], "unclean", values(f"a{b}", 10)) == 0
        cluster.stop_broker(2, kill=True)
        for b in range(10):
            assert await produce_replicated(cluster, acked, cluster.nodes[0], "unclean", values(f"b{b}", 10)) == 0
        assert cluster.nodes[0].logs.log("unclean", 0).high_watermark == 200
        cluster.stop_broker(1, kill=True)
        cluster.stop_broker(0, kill=True)
        cluster.start_broker(2)  # the partition is offline; unclean election is on
        cluster.elect_unclean("unclean", 0)
        assert cluster.leader_node("unclean", 0).node_id == 2
        acked.values = {o: v for o, v in acked.values.items() if o < 100}  # what an unclean election may lose
        cluster.start_broker(1)
        replicate(cluster)
        assert 1 in cluster.describe_partition("unclean", 0)["isr"]
        cluster.replication.paused.add(1)
        async with trio.open_nursery() as nursery:
            for b in range(5):  # acks=all waits for broker 1, which holds back
                nursery.start_soon(acked.produce, cluster.nodes[2], "unclean", values(f"c{b}", 10))
            await wait_all_tasks_blocked()
            cluster.start_broker(0)
            replicate(cluster)  # broker 0 truncates to 100 and copies broker 2's new records
            assert 0 in cluster.describe_partition("unclean", 0)["isr"]
            cluster.move_leader("unclean", 0, 0)
            high_watermark_within_isr(cluster, "unclean")
            cluster.nodes[0].notify_data_arrived()
            await wait_all_tasks_blocked()
            cluster.stop_broker(0, kill=True)
            await wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()

    try:
        trio.run(main)
        acked.check(cluster, "unclean")
    finally:
        cluster.close()


@pytest.mark.parametrize("made_by", ["CreateTopics", "CreatePartitions"])
def test_a_partition_made_while_a_broker_is_stopped_does_not_count_it_in_sync(tmp_path, clock, made_by):
    """RF 3 and min.insync.replicas 2 with broker 2 stopped: 1,000 records in 100 acks=all
    batches; broker 2 starts (its fetcher held back) and the leader stops cleanly. Broker 2 has
    nothing and must not be elected; the ISR check while it is down must not fail."""
    cluster = open_cluster(tmp_path / "c", 3, clock)
    acked = Acked()
    topic = f"outage-{uuid.uuid4().hex[:6]}"

    async def main():
        first = cluster.nodes[0]
        if made_by == "CreatePartitions":
            await create_topic(first, topic, assignments={0: (0, 1, 2)}, configs={"min.insync.replicas": "2"})
        cluster.stop_broker(2)
        if made_by == "CreateTopics":
            await create_topic(first, topic, assignments={0: (0, 1, 2)}, configs={"min.insync.replicas": "2"})
            p = 0
        else:
            answer = await call(first, 37, 3, {"topics": [{"name": topic, "count": 2, "assignments": [
                {"broker_ids": [0, 1, 2]}]}], "timeout_ms": 10_000, "validate_only": False})
            assert answer["results"][0]["error_code"] == ErrorCode.NONE, answer
            p = 1
        assert 2 not in cluster.describe_partition(topic, p)["isr"]
        leader = cluster.leader_node(topic, p)
        for b in range(100):
            assert await produce_replicated(cluster, acked, leader, topic, values(f"r{b}", 10), p) == ErrorCode.NONE
        assert len(acked.values) == 1000, acked.errors[:5]
        check_isr(cluster, clock, 30_000)  # broker 2 still stopped: nothing to check on it
        cluster.replication.paused.add(2)
        cluster.start_broker(2)
        assert 2 not in cluster.describe_partition(topic, p)["isr"]
        cluster.stop_broker(leader.node_id)
        assert cluster.leader_node(topic, p).node_id != 2
        acked.check(cluster, topic, p)

    try:
        trio.run(main)
    finally:
        cluster.close()
