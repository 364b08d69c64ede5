"""A simulated cluster's replication under seeded random schedules, on the broker clock, without
sockets or sleeps (FoundationDB-style): a `Cluster` built in the test, its replica fetchers run
one pass at a time, and a seeded mix of appends on the leader, fetch passes, ISR checks, stops,
kills, starts, leader moves, reassignments and paused replication. After every step:

- the ISR is a subset of the replicas, and the leader (when there is one) is in it;
- the high watermark never goes back;
- every acknowledged record (an acks=all write: below the high watermark once) is still at its
  offset, unchanged, on the leader;

and at the end, with every broker started and replication resumed, the live replicas converge
byte for byte. A failing seed replays: `pytest -k 'seed_13'`; REPLICA_SEEDS=150 runs more."""

from __future__ import annotations

import os
import random

import pytest

from trafka.broker.config import BrokerConfig
from trafka.broker.cluster.controller import Controller
from trafka.broker.cluster.nodes import Cluster
from trafka.storage.clock import ManualClock
from trafka.wire import records as rec

BROKERS, LAG_MS = 4, 10_000
SETTINGS = {"cluster.brokers": BROKERS, "offsets.topic.num.partitions": 1, "transaction.state.log.num.partitions": 1,
            "share.coordinator.state.topic.num.partitions": 1, "replica.lag.time.max.ms": LAG_MS}
TOPIC = "ledger"


class Schedule:
    def __init__(self, cluster: Cluster, clock: ManualClock, seed: int):
        self.cluster, self.clock, self.rng, self.seed = cluster, clock, random.Random(seed), seed
        self.next_value = 0
        self.appended: dict[int, bytes] = {}  # offset -> value, as appended on a leader
        self.acked: dict[int, bytes] = {}  # offset -> value once below the high watermark
        self.high_watermark = 0
        self.trace: list[str] = []
        logs = cluster.running_nodes()[0].logs
        metadata = logs.create_topic(TOPIC, 1, {})
        self.topic_id = metadata.topic_id
        cluster.controller.assign(self.topic_id, {0: (0, 1, 2)})  # not by the (random) topic id: a seed replays

    # --- reading the cluster -------------------------------------------------------------------

    def state(self):
        return self.cluster.controller.partition(self.topic_id, 0)

    def leader(self):
        leader = self.state().leader
        return None if leader < 0 or leader in self.cluster.stopped else self.cluster.nodes[leader]

    def values_at(self, node) -> dict[int, bytes]:
        log = node.logs.log(TOPIC, 0)
        data = log.read(log.log_start_offset, 1 << 30).to_bytes() if log.log_end_offset > log.log_start_offset else b""
        out = {}
        for pos, header in rec.iter_batches(data):
            for i, record in enumerate(rec.decode_records(data, pos)):
                out[header.base_offset + i] = record.value
        return out

    # --- the steps -----------------------------------------------------------------------------

    def step(self) -> None:
        roll = self.rng.random()
        self.clock.advance(self.rng.choice([0, 50, 200]))  # broker time between two steps
        running = [n.node_id for n in self.cluster.running_nodes()]
        stopped = sorted(self.cluster.stopped)
        if roll < 0.35:
            self.append(self.rng.randint(1, 20))
        elif roll < 0.65:
            node = self.cluster.nodes[self.rng.choice(running)]
            if node.node_id not in self.cluster.replication.paused:
                self.trace.append(f"fetch {node.node_id}")
                self.cluster.replication.fetch_once(node)
        elif roll < 0.70:
            self.clock.advance(self.rng.choice([1000, LAG_MS + 1]))
            self.trace.append(f"check ISR at {self.clock.time_ms()}")
            self.cluster.replication.check_isr(self.clock.time_ms(), LAG_MS)
        elif roll < 0.77 and not stopped and len(running) > 2:
            victim, kill = self.rng.choice(running), self.rng.random() < 0.5
            self.trace.append(f"{'kill' if kill else 'stop'} {victim}")
            self.cluster.stop_broker(victim, kill=kill)
        elif roll < 0.84 and stopped:
            node = self.rng.choice(stopped)
            self.trace.append(f"start {node}")
            self.cluster.start_broker(node)
        elif roll < 0.90:
            state = self.state()
            candidates = [r for r in state.isr if r != state.leader and r not in self.cluster.stopped]
            if candidates:
                new = self.rng.choice(candidates)
                self.trace.append(f"leader -> {new}")
                self.cluster.move_leader(TOPIC, 0, new)
        elif roll < 0.93 and not stopped:
            first = self.rng.randrange(BROKERS)
            replicas = [(first + i) % BROKERS for i in range(3)]
            self.trace.append(f"reassign -> {replicas}")
            try:
                self.cluster.reassign(TOPIC, 0, replicas)
            except ValueError as refused:
                self.trace.append(f"  refused: {refused}")
        else:
            node = self.rng.randrange(BROKERS)
            paused = self.cluster.replication.paused
            self.trace.append(f"{'resume' if node in paused else 'pause'} {node}")
            (paused.discard if node in paused else paused.add)(node)

    def append(self, count: int) -> None:
        leader = self.leader()
        if leader is None:
            return
        values = [b"v%d" % (self.next_value + i) for i in range(count)]
        self.next_value += count
        self.cluster.replication.partition(leader, TOPIC, 0, self.topic_id).apply_leadership()
        log = leader.logs.log(TOPIC, 0)
        base = log.log_end_offset
        log.append(rec.encode_batch([rec.Record(None, v, (), 1000) for v in values]))
        self.cluster.replication.appended(leader, TOPIC, 0)
        for i, value in enumerate(values):
            self.appended[base + i] = value
        self.trace.append(f"append {count} at {base} on {leader.node_id}")

    # --- the invariants ------------------------------------------------------------------------

    def check(self) -> None:
        where = f"seed {self.seed}, after: {' | '.join(self.trace[-8:])}"
        state = self.state()
        assert set(state.isr) <= set(state.replicas), f"ISR {state.isr} not within replicas {state.replicas}; {where}"
        assert state.leader < 0 or state.leader in state.isr, f"leader {state.leader} not in ISR {state.isr}; {where}"
        # What the controller acts on is what its metadata log holds (each change written first).
        controller = self.cluster.controller
        logged = Controller(controller.node_ids, controller.racks, None)
        for record in self.cluster.metadata.records("PartitionRecord"):
            logged._replay(record)
        assert (logged.partition(self.topic_id, 0), logged.reassignment(self.topic_id, 0)) == (
            state, controller.reassignment(self.topic_id, 0)), f"the metadata log lags the controller; {where}"
        leader = self.leader()
        if leader is None:
            return
        log = leader.logs.log(TOPIC, 0)
        assert log.high_watermark >= self.high_watermark, (
            f"high watermark went back {self.high_watermark} -> {log.high_watermark}; {where}")
        self.high_watermark = log.high_watermark
        on_leader = self.values_at(leader)
        for offset in range(min(self.acked, default=0), self.high_watermark):
            if offset not in self.acked and offset in self.appended and on_leader.get(offset) == self.appended[offset]:
                self.acked[offset] = self.appended[offset]
        for offset, value in self.acked.items():
            assert on_leader.get(offset) == value, (
                f"acknowledged offset {offset} ({value!r}) is {on_leader.get(offset)!r} on leader {leader.node_id}; {where}")

    def heal(self) -> None:
        for node in sorted(self.cluster.stopped):
            self.cluster.start_broker(node)
        self.cluster.replication.paused.clear()
        for _ in range(200):
            if not any([self.cluster.replication.fetch_once(n) for n in self.cluster.running_nodes()]):
                break
        self.check()
        state = self.state()
        logs = {r: self.values_at(self.cluster.nodes[r]) for r in state.replicas}
        leader_values = logs[state.leader]
        for replica, values in logs.items():
            assert values == leader_values, f"seed {self.seed}: replica {replica} differs from leader {state.leader}"
        assert set(state.isr) == set(state.replicas), f"seed {self.seed}: healed, yet ISR {state.isr} of {state.replicas}"


@pytest.mark.parametrize("seed", range(int(os.environ.get("REPLICA_SEEDS", "24"))), ids=lambda s: f"seed_{s}")
def test_seeded_schedules_keep_the_replication_invariants(tmp_path, seed):
    clock = ManualClock()
    cluster = Cluster(tmp_path / "cluster", BrokerConfig.from_sources([f"{k}={v}" for k, v in SETTINGS.items()], []),
                      clock=clock)
    try:
        schedule = Schedule(cluster, clock, seed)
        for _ in range(300):
            schedule.step()
            schedule.check()
        schedule.heal()
        assert len(schedule.acked) > 50, f"seed {seed}: too little was acknowledged to say anything"
    finally:
        cluster.close()
