"""Three consumers share six partitions; when one leaves or dies the others take over.
Each scenario runs with kafka-python, confluent-kafka and aiokafka groups."""

from __future__ import annotations

import time

import pytest

from trafka.testing.waiting import wait_until
from testkit.groups import (
    CLIENTS, HEARTBEAT_INTERVAL_MS, ConsumerProcess, PolledConsumer, create_topic, produce,
)

TOPIC = "six"
CLOCK_SESSION_TIMEOUT_MS = 30_000  # long beside the real seconds the tests take: only the clock expires anyone


def _split_evenly(consumers) -> bool:
    assignments = [set(c.assignment) for c in consumers]
    return all(len(a) == 2 for a in assignments) and set().union(*assignments) == set(range(6))


def _covered_by(consumers) -> bool:
    assignments = [set(c.assignment) for c in consumers]
    return sum(map(len, assignments)) == 6 and set().union(*assignments) == set(range(6))


@pytest.mark.parametrize("client", CLIENTS)
def test_three_consumers_get_two_partitions_each_and_a_leaver_is_replaced(broker, client):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, TOPIC, 6)
    before = [f"before-{i}" for i in range(60)]
    produce(bootstrap, TOPIC, before, partitions=6)
    # A session longer than the waits below: the takeover can only come from the LeaveGroup.
    consumers = [PolledConsumer(bootstrap, TOPIC, "leavers", client, enable_auto_commit=True,
                                session_timeout_ms=CLOCK_SESSION_TIMEOUT_MS) for _ in range(3)]
    try:
        wait_until(lambda: _split_evenly(consumers), 20, "an even split of six partitions")
        wait_until(lambda: {v for c in consumers for v in c.values()} == set(before), 10, "every record consumed")
        leaver, stayers = consumers[0], consumers[1:]
        leaver.close()  # commits its position, sends LeaveGroup: the rebalance starts at once
        wait_until(lambda: _covered_by(stayers), 20, "the leaver's partitions moving")
        after = [f"after-{i}" for i in range(60)]
        produce(bootstrap, TOPIC, after, partitions=6)
        # The stayers pick up where the leaver committed: the new records arrive exactly once.
        wait_until(lambda: sum(v.startswith("after") for c in stayers for v in c.values()) >= 60, 10, "the new records")
        assert sorted(v for c in stayers for v in c.values() if v.startswith("after")) == sorted(after)
    finally:
        for c in consumers[1:]:
            c.close()


def _advance_clock_while_members_heartbeat(broker, steps: int) -> None:
    """Move broker time 10 s a step. Between steps the live members get one and a half real
    heartbeat intervals: their heartbeat timers are the clients' own and run on real time."""
    for _ in range(steps):
        broker.advance_clock(10_000)
        time.sleep(1.5 * HEARTBEAT_INTERVAL_MS / 1000)


@pytest.mark.parametrize("client", CLIENTS)
def test_a_consumer_that_is_killed_loses_its_partitions_when_its_session_times_out(broker, client):
    """SIGKILL leaves no LeaveGroup: the session timeout (30 s, passed on the broker's clock) is
    what detects it, not before (10 s in, its partitions are still its own), and then at once."""
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, TOPIC, 6)
    doomed = ConsumerProcess(bootstrap, TOPIC, "dead", client, session_timeout_ms=CLOCK_SESSION_TIMEOUT_MS)
    survivors = [PolledConsumer(bootstrap, TOPIC, "dead", client, session_timeout_ms=CLOCK_SESSION_TIMEOUT_MS)
                 for _ in range(2)]
    try:
        wait_until(lambda: _split_evenly([doomed, *survivors]), 20, "an even split of six partitions")
        doomed.kill()  # SIGKILL: no LeaveGroup, no more heartbeats from any of its threads
        _advance_clock_while_members_heartbeat(broker, 1)
        assert sum(len(c.assignment) for c in survivors) == 4, [c.assignment for c in survivors]
        _advance_clock_while_members_heartbeat(broker, 3)  # 40 s of broker time since the kill
        wait_until(lambda: _covered_by(survivors), 20, "the dead member's partitions moving")
    finally:
        doomed.kill()
        for c in survivors:
            c.close()
