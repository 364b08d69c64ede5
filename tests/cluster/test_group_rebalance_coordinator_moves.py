"""A classic consumer group in the middle of a rebalance when its coordinator moves (docs/cluster.md):
a newcomer's JoinGroup waits for an old member to rejoin, then `__consumer_offsets` changes leader
(moved, or its broker stopped). The waiting JoinGroup is answered NOT_COORDINATOR at once, the
newcomer finds the new coordinator, and the group settles with both members long before the
rebalance timeout (kafka-python, whose rejoin happens only in poll, so the test decides when
the old member comes). Before the fix the moved leader's case waited out the rebalance
timeout; a stopped broker's parked JoinGroup already ended with its connection."""

from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer

from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_until

TOPIC, GROUP = "moving", "movers"
OFFSETS = "__consumer_offsets"
REBALANCE_MS = 60000  # kafka-python's max_poll_interval_ms is its JoinGroup rebalance timeout
SETTLED_WITHIN_S = 20
# kafka-python 3.0.12 drops a SyncGroup answer that comes after its poll() returned on timeout
# in the middle of a join (the member keeps an empty assignment); a second leaves room for it.
POLL_MS = 1000


def _coordinator(cluster) -> int:
    for address in cluster.bootstrap_servers.split(","):
        try:
            with RawClient(address) as client:
                found = client.request(10, 3, {"key": GROUP, "key_type": 0})
        except OSError:
            continue
        if found.error_code == 0:
            return found.node_id
    raise AssertionError("no broker names the group's coordinator")


def _consumer(cluster) -> KafkaConsumer:
    """Metadata refreshed often, so the new topic's partitions reach the leader's assignor soon."""
    return KafkaConsumer(TOPIC, bootstrap_servers=cluster.bootstrap_servers, group_id=GROUP,
                         auto_offset_reset="earliest", enable_auto_commit=False, max_poll_interval_ms=REBALANCE_MS,
                         session_timeout_ms=30000, heartbeat_interval_ms=500, metadata_max_age_ms=500)


def _poll_until_assigned(consumer: KafkaConsumer, deadline: float) -> None:
    while not consumer.assignment() and time.monotonic() < deadline:
        consumer.poll(POLL_MS)


def _poll_until(consumer: KafkaConsumer, done: threading.Event) -> None:
    while not done.is_set():
        consumer.poll(POLL_MS)


@pytest.mark.trafka_config({"offsets.topic.num.partitions": 1})
@pytest.mark.parametrize("how", ["leader moved", "broker stopped"])
def test_a_rebalance_waiting_for_a_member_settles_soon_after_the_coordinator_moves(trafka_cluster, how):
    admin = AdminClient({"bootstrap.servers": trafka_cluster.bootstrap_servers})
    for future in admin.create_topics([NewTopic(TOPIC, 2, 3)]).values():
        future.result(10)
    wait_until(lambda: _led(admin), 20, "leaders of the topic's partitions")
    old = _consumer(trafka_cluster)
    newcomer = _consumer(trafka_cluster)
    finished = threading.Event()
    joining = threading.Thread(target=_poll_until, args=(newcomer, finished))  # the newcomer polls all along
    try:
        _poll_until_assigned(old, time.monotonic() + 20)
        assert old.assignment(), "the first member has its partitions"
        coordinator = _coordinator(trafka_cluster)
        joining.start()
        # The newcomer's JoinGroup parks until `old` rejoins, which kafka-python does in poll().
        wait_until(lambda: _group_state(trafka_cluster) == "PreparingRebalance", 20, "the newcomer's rebalance")
        moved_at = time.monotonic()
        if how == "leader moved":
            isr = trafka_cluster.partition_state(OFFSETS, 0)["isr"]
            trafka_cluster.move_leader(OFFSETS, 0, next(b for b in isr if b != coordinator))
        else:
            trafka_cluster.stop_broker(coordinator)
        assert _coordinator(trafka_cluster) != coordinator
        while time.monotonic() < moved_at + SETTLED_WITHIN_S and not (_settled(newcomer) and _settled(old)):
            old.poll(POLL_MS)
        took = time.monotonic() - moved_at
        assert newcomer.assignment() and old.assignment(), f"not settled {took:.1f} s after the move"
        assert took < SETTLED_WITHIN_S < REBALANCE_MS / 1000
        assert sorted(p.partition for p in old.assignment() | newcomer.assignment()) == [0, 1]
    finally:
        finished.set()
        if joining.is_alive():
            joining.join()
        newcomer.close()
        old.close()


def _led(admin: AdminClient) -> bool:
    partitions = admin.list_topics(TOPIC, timeout=10).topics[TOPIC].partitions
    return len(partitions) == 2 and all(p.leader >= 0 for p in partitions.values())


def _settled(consumer: KafkaConsumer) -> bool:
    return len(consumer.assignment()) == 1


def _group_state(cluster) -> str | None:
    coordinator = _coordinator(cluster)
    with RawClient(cluster.broker_addresses[coordinator]) as client:
        described = client.request(15, 5, {"groups": [GROUP], "include_authorized_operations": False})
    return described.groups[0].group_state
