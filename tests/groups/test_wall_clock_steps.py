"""Deadlines on a timer no wall-clock step moves: a CI machine's NTP jump or a laptop's resume
steps the wall clock, and Kafka's timers (System.nanoTime) do not notice. trafka's deadlines
(sessions, rebalances, transaction timeouts, share locks) were points in wall-clock time plus
the moved offset, so a step of an hour expired every member's session at once and aborted
every open transaction. The step is made where the broker reads the wall clock
(trafka.storage.clock), in an in-process broker, with real clients."""

from __future__ import annotations

import time
import types
import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

import trafka.storage.clock as broker_clock
from trafka.testing.waiting import wait_until

STEP_NS = 3600 * 10**9  # the wall clock jumps an hour forward


@pytest.fixture
def wall_clock_step(monkeypatch):
    """Call it to step the wall clock the broker reads by an hour; monotonic time goes on."""
    def step():
        real = time.time_ns
        monkeypatch.setattr(broker_clock, "time", types.SimpleNamespace(
            time_ns=lambda: real() + STEP_NS, monotonic_ns=time.monotonic_ns))
    return step


@pytest.mark.trafka_config({"transaction.abort.timed.out.transaction.cleanup.interval.ms": 500})
def test_a_wall_clock_step_expires_no_session_and_aborts_no_transaction(trafka_inprocess_broker, wall_clock_step):
    bootstrap = trafka_inprocess_broker.bootstrap_servers
    topic, group = f"steady-{uuid.uuid4().hex[:6]}", f"g-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 4, 1)])[topic].result(10)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"t-{group}", "transaction.timeout.ms": 60000})
    producer.init_transactions(20)
    producer.begin_transaction()
    for i in range(2000):
        producer.produce(topic, b"v%d" % i, partition=i % 4)
    producer.flush(20)
    assigned: list[int] = []
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "session.timeout.ms": 10000,
                         "heartbeat.interval.ms": 1000, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic], on_assign=lambda c, parts: assigned.append(len(parts)))
    wait_until(lambda: consumer.poll(0.1) is None and bool(assigned), 20, "the member got its partitions")
    coordinator = trafka_inprocess_broker._thread_broker.broker.group_coordinator
    (generation,) = {g.generation for g in coordinator.groups.values() if g.group_id == group}
    wall_clock_step()
    end = time.monotonic() + 4  # heartbeats and the broker's periodic checks run meanwhile
    while time.monotonic() < end:
        consumer.poll(0.2)
    [found] = [g for g in coordinator.groups.values() if g.group_id == group]
    assert (found.generation, len(found.members)) == (generation, 1), "the step expired the member's session"
    assert assigned == [4]  # never revoked and assigned again
    producer.commit_transaction(20)  # not aborted by the step: it commits
    consumer.close()
