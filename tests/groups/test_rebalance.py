"""Three consumers share six partitions; when one leaves or dies the others take over."""

from __future__ import annotations

import time

from conftest import SESSION_TIMEOUT_MS
from groups_helpers import ConsumerProcess, PolledConsumer, create_topic, produce, wait_until

TOPIC = "six"


def _split_evenly(consumers) -> bool:
    assignments = [set(c.assignment) for c in consumers]
    return all(len(a) == 2 for a in assignments) and set().union(*assignments) == set(range(6))


def _covered_by(consumers) -> bool:
    assignments = [set(c.assignment) for c in consumers]
    return sum(map(len, assignments)) == 6 and set().union(*assignments) == set(range(6))


def test_three_consumers_get_two_partitions_each_and_a_leaver_is_replaced(broker):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, TOPIC, 6)
    produce(bootstrap, TOPIC, [f"v{i}" for i in range(60)], partitions=6)
    consumers = [PolledConsumer(bootstrap, TOPIC, "leavers") for _ in range(3)]
    try:
        wait_until(lambda: _split_evenly(consumers), 20, "an even split of six partitions")
        wait_until(lambda: sum(len(c.records) for c in consumers) == 60, 10, "every record consumed once")
        leaver, stayers = consumers[0], consumers[1:]
        leaver.close()  # sends LeaveGroup: the rebalance starts at once
        took = wait_until(lambda: _covered_by(stayers), SESSION_TIMEOUT_MS / 1000, "the leaver's partitions moving")
        assert took < SESSION_TIMEOUT_MS / 1000
        assert sorted(v for c in consumers for v in c.values()) == sorted(f"v{i}" for i in range(60))
    finally:
        for c in consumers[1:]:
            c.close()


def test_a_consumer_that_stops_heartbeating_loses_its_partitions_within_the_session_timeout(broker):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, TOPIC, 6)
    doomed = ConsumerProcess(bootstrap, TOPIC, "dead")
    survivors = [PolledConsumer(bootstrap, TOPIC, "dead") for _ in range(2)]
    try:
        wait_until(lambda: _split_evenly([doomed, *survivors]), 20, "an even split of six partitions")
        doomed.kill()  # no LeaveGroup, no more heartbeats
        killed_at = time.monotonic()
        wait_until(lambda: _covered_by(survivors), SESSION_TIMEOUT_MS / 1000 + 5, "the dead member's partitions moving")
        # The session timeout is what detects it: not before, and not much after.
        took = time.monotonic() - killed_at
        assert SESSION_TIMEOUT_MS / 1000 - 1.5 < took < SESSION_TIMEOUT_MS / 1000 + 4
    finally:
        doomed.kill()
        for c in survivors:
            c.close()
