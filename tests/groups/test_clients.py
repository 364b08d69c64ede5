"""Groups across client libraries, and static membership."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from confluent_kafka import Consumer

from trafka.testing.waiting import wait_until
from testkit.groups import GROUP_BROKER_CONFIG, HEARTBEAT_INTERVAL_MS, SESSION_TIMEOUT_MS, PolledConsumer, create_topic, produce
from trafka.testing import TrafkaBroker

TOPIC = "mixed"


class ConfluentConsumer:
    """A confluent-kafka (librdkafka) consumer polled in its own thread."""

    def __init__(self, bootstrap: str, topic: str, group: str, **config):
        settings = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": SESSION_TIMEOUT_MS,
            "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
        }
        settings.update(config)
        self.consumer = Consumer(settings)
        self.assignment: set[int] = set()
        self.assign_calls = 0
        self.revoke_calls = 0
        self.values: list[str] = []
        self._stop = threading.Event()
        self.consumer.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _on_assign(self, consumer, partitions):
        self.assign_calls += 1
        self.assignment = {p.partition for p in partitions}

    def _on_revoke(self, consumer, partitions):
        self.revoke_calls += 1
        self.assignment = set()

    def _run(self):
        while not self._stop.is_set():
            message = self.consumer.poll(0.2)
            if message is not None and message.error() is None:
                self.values.append(message.value().decode())
        self.consumer.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(30)


class AioConsumer:
    """An aiokafka consumer on its own event loop thread."""

    def __init__(self, bootstrap: str, topic: str, group: str):
        self.assignment: set[int] = set()
        self.values: list[str] = []
        self._stop = threading.Event()
        self._args = (bootstrap, topic, group)
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self._thread.start()

    async def _run(self):
        from aiokafka import AIOKafkaConsumer

        bootstrap, topic, group = self._args
        consumer = AIOKafkaConsumer(
            topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
            enable_auto_commit=False, session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
        )
        await consumer.start()
        try:
            while not self._stop.is_set():
                batches = await consumer.getmany(timeout_ms=200)
                self.values.extend(r.value.decode() for batch in batches.values() for r in batch)
                self.assignment = {tp.partition for tp in consumer.assignment()}
        finally:
            await consumer.stop()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(30)


def _split(consumers, sizes) -> bool:
    assignments = [set(c.assignment) for c in consumers]
    return sorted(map(len, assignments)) == sorted(sizes) and set().union(*assignments) == set(range(sum(sizes)))


@pytest.mark.parametrize("other", ["kafka-python", "aiokafka"])
def test_a_group_of_two_client_libraries(broker, other):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, TOPIC, 6)
    produce(bootstrap, TOPIC, [f"v{i}" for i in range(60)], partitions=6)
    group = f"mixed-{other}"
    if other == "kafka-python":
        first = PolledConsumer(bootstrap, TOPIC, group)  # range and roundrobin by default
    else:
        first = AioConsumer(bootstrap, TOPIC, group)  # roundrobin only
    second = ConfluentConsumer(bootstrap, TOPIC, group)  # range,roundrobin
    try:
        wait_until(lambda: _split([first, second], [3, 3]), 30, "three partitions each")
        def seen() -> list[str]:
            return second.values + (first.values() if other == "kafka-python" else first.values)

        wait_until(lambda: len(seen()) == 60, 15, "every record consumed")
        assert sorted(seen()) == sorted(f"v{i}" for i in range(60))
    finally:
        second.close()
        first.close()


@pytest.fixture
def inprocess_broker(tmp_path):
    """The broker in this process, so the test can read the coordinator's view of the group."""
    with TrafkaBroker(data_dir=tmp_path / "data", config=GROUP_BROKER_CONFIG, in_process=True) as running:
        yield running


def _group(broker, group_id: str) -> tuple[str, int, dict[str, int]]:
    """(state, generation, {group instance id: heartbeat deadline}) as the coordinator has them."""
    def read():
        group = broker._thread_broker.broker.group_coordinator.groups[group_id]
        return group.state.name, group.generation, {m.group_instance_id: m.heartbeat_deadline for m in group.members.values()}

    return broker._thread_broker.call(read)


def _heartbeat_answered_after(broker, group_id: str, instance: str, deadline: int):
    """A heartbeat of `instance` answered at least one interval after the one that set `deadline`."""
    return lambda: _group(broker, group_id)[2].get(instance, -1) > deadline + HEARTBEAT_INTERVAL_MS


def test_static_member_rejoins_within_its_session_without_a_rebalance(inprocess_broker):
    broker = inprocess_broker
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, TOPIC, 4)
    steady = ConfluentConsumer(bootstrap, TOPIC, "static", **{"group.instance.id": "steady"})
    bouncer = ConfluentConsumer(bootstrap, TOPIC, "static", **{"group.instance.id": "bouncer"})
    try:
        wait_until(lambda: _split([steady, bouncer], [2, 2]), 30, "two partitions each")
        # Settled: the group is Stable and the steady member heartbeats in it.
        wait_until(lambda: _group(broker, "static")[0] == "STABLE", 30, "a stable group")
        wait_until(_heartbeat_answered_after(broker, "static", "steady", _group(broker, "static")[2]["steady"]), 30,
                   "the steady member's heartbeats in the stable group")
        before = (steady.assign_calls, steady.revoke_calls, set(bouncer.assignment))
        generation = _group(broker, "static")[1]
        bouncer.close()  # a static member sends no LeaveGroup
        bouncer = ConfluentConsumer(bootstrap, TOPIC, "static", **{"group.instance.id": "bouncer"})
        wait_until(lambda: bouncer.assignment, SESSION_TIMEOUT_MS / 1000, "the static member's assignment")
        assert bouncer.assignment == before[2]
        # Had the rejoin started a rebalance, the steady member's next heartbeat would have been
        # told so (REBALANCE_IN_PROGRESS) and it would rejoin: wait for that heartbeat, not a sleep.
        wait_until(_heartbeat_answered_after(broker, "static", "steady", _group(broker, "static")[2]["steady"]), 30,
                   "a heartbeat of the steady member after the rejoin")
        assert _group(broker, "static")[:2] == ("STABLE", generation)
        assert (steady.assign_calls, steady.revoke_calls) == before[:2]
    finally:
        bouncer.close()
        steady.close()


def test_a_static_member_that_stays_away_is_removed_after_its_session_timeout(broker):
    """The session timeout (30 s) passes on the broker's clock, moved 10 s a step; between steps
    the steady member gets 1.5 real heartbeat intervals (its heartbeat timer is real time)."""
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, TOPIC, 4)
    session = {"session.timeout.ms": 30_000}
    steady = ConfluentConsumer(bootstrap, TOPIC, "static-gone", **{"group.instance.id": "steady"}, **session)
    gone = ConfluentConsumer(bootstrap, TOPIC, "static-gone", **{"group.instance.id": "gone"}, **session)

    def advance_clock(steps: int) -> None:
        for _ in range(steps):
            broker.advance_clock(10_000)
            time.sleep(1.5 * HEARTBEAT_INTERVAL_MS / 1000)

    try:
        wait_until(lambda: _split([steady, gone], [2, 2]), 30, "two partitions each")
        gone.close()  # a static member sends no LeaveGroup: only its session timeout removes it
        advance_clock(1)
        assert len(steady.assignment) == 2, steady.assignment  # 10 s in: still a member
        advance_clock(3)  # 40 s since it went
        wait_until(lambda: steady.assignment == {0, 1, 2, 3}, 20, "the takeover")
    finally:
        steady.close()
