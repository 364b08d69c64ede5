"""KafkaJS and @platformatic/kafka against a simulated cluster of three brokers (docs/cluster.md)
when one stops: an idempotent acks=all producer and a consumer group carry on while the broker
that coordinates the group (and leads some partitions) is stopped and started again; every
acknowledged record is read, none is stored twice, each partition keeps its order. One cluster
for the module; each client stops and starts a broker of its own choosing (the coordinator of its
own group)."""

from __future__ import annotations

import time
import uuid

import pytest

from compat_tests.conftest import NODE_FIXTURES
from testkit.clients.base import Msg
from testkit import txn_clients
from testkit.clients.node import Node, NodeTxn, read_values_node, wait_state
from testkit.cluster import read_from_start
from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient

PARTITIONS = 6
PER_PARTITION = 100  # per round, 3 rounds: 1,800 records


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    broker = TrafkaBroker(data_dir=tmp_path_factory.mktemp("node-cluster") / "data",
                          config={"cluster.brokers": 3, "cluster.broker.racks": "a,b,c"})
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def _states(cluster, topic: str) -> dict[int, tuple[int, list[int]]]:
    from confluent_kafka.admin import AdminClient

    metadata = AdminClient({"bootstrap.servers": cluster.bootstrap_servers}).list_topics(topic, timeout=10)
    return {p.id: (p.leader, sorted(p.isrs)) for p in metadata.topics[topic].partitions.values()}


def _wait_in_sync(cluster, topic: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not all(len(isr) == 3 for _, isr in _states(cluster, topic).values()):
        assert time.monotonic() < deadline, f"ISRs never refilled: {_states(cluster, topic)}"
        time.sleep(0.1)


def _coordinator(cluster, group: str) -> int:
    for address in cluster.bootstrap_servers.split(","):
        try:
            with RawClient(address) as raw:
                found = raw.request(10, 3, {"key": group, "key_type": 0})
        except OSError:
            continue
        assert found.error_code == 0, found
        return found.node_id
    raise AssertionError("no broker answers")


def _value(round_: int, partition: int, i: int) -> bytes:
    return b"r%d-p%d-%04d" % (round_, partition, i)


def _produce_round(driver: Node, topic: str, round_: int) -> None:
    """One idempotent producer per partition call, 100 records in 4 sends each."""
    for p in range(PARTITIONS):
        msgs = [Msg(b"k%d" % p, _value(round_, p, i)) for i in range(PER_PARTITION)]
        assert len(driver.produce(topic, msgs, partition=p, idempotent=True, chunk=25)) == PER_PARTITION


@pytest.mark.parametrize("client", list(NODE_FIXTURES))
def test_producer_and_group_carry_on_while_the_coordinators_broker_stops_and_starts(request, cluster, client):
    from confluent_kafka.admin import AdminClient, NewTopic

    driver = Node(cluster.bootstrap_servers, request.getfixturevalue(NODE_FIXTURES[client]))
    topic, group = f"node-failover-{client}-{uuid.uuid4().hex[:6]}", f"node-failover-{client}"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    for future in admin.create_topics([NewTopic(topic, PARTITIONS, 3, config={"min.insync.replicas": "2"})]).values():
        future.result(10)

    member = driver.member(topic, group, sessionTimeout=6000, heartbeatInterval=500)
    try:
        _produce_round(driver, topic, 0)
        wait_state(member, lambda s: len(set(s["values"])) >= 600, timeout=40, what="round 0 read")
        victim = _coordinator(cluster, group)
        led = {p for p, (leader, _) in _states(cluster, topic).items() if leader == victim}
        assert led, "the victim leads some partitions"
        cluster.stop_broker(victim)
        states = _states(cluster, topic)
        assert all(leader != victim and victim not in isr for leader, isr in states.values()), states
        assert _coordinator(cluster, group) != victim  # the group's coordinator moved
        _produce_round(driver, topic, 1)  # to the partitions' new leaders
        wait_state(member, lambda s: len(set(s["values"])) >= 1200, timeout=60, what="round 1 read")
        cluster.start_broker(victim)
        _wait_in_sync(cluster, topic)
        _produce_round(driver, topic, 2)
        state = wait_state(member, lambda s: len(set(s["values"])) >= 1800, timeout=40, what="round 2 read")
    finally:
        member.close()
    expected = {_value(r, p, i) for r in range(3) for p in range(PARTITIONS) for i in range(PER_PARTITION)}
    assert set(state["values"]) == expected and not state["errors"], state["errors"]
    stored = read_from_start(cluster.bootstrap_servers, topic, PARTITIONS, 1800, timeout=30, settle=0.5)
    assert len(stored) == 1800 and set(stored) == expected  # nothing lost, nothing stored twice
    for p in range(PARTITIONS):  # each partition in the order it was sent
        mine = [v for v in stored if v.split(b"-")[1] == b"p%d" % p]
        assert mine == sorted(mine)


def _txn_coordinator(cluster, transactional_id: str) -> int:
    for address in cluster.bootstrap_servers.split(","):
        try:
            with RawClient(address) as raw:
                found = raw.request(10, 3, {"key": transactional_id, "key_type": 1})
        except OSError:
            continue
        assert found.error_code == 0, found
        return found.node_id
    raise AssertionError("no broker answers")


@pytest.mark.parametrize("client", list(NODE_FIXTURES))
def test_transactions_go_on_while_the_transaction_coordinators_broker_stops(request, cluster, client):
    """A transactional producer commits 50 records to a 3-replica topic; the broker coordinating
    its transactional id stops (the coordinator moves with __transaction_state's leadership); the
    same producer goes on: commits, aborts, commits, and once the broker is back commits again;
    read_committed (the client's own and confluent-kafka's) sees exactly the committed records in
    order. (One aborted transaction only: @platformatic/kafka skips just the last of two of one
    producer, test_node_clients.py's strict xfail.)"""
    from confluent_kafka.admin import AdminClient, NewTopic

    node = request.getfixturevalue(NODE_FIXTURES[client])
    topic, tid = f"node-txn-failover-{client}-{uuid.uuid4().hex[:6]}", f"node-txn-failover-{client}"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    for future in admin.create_topics([NewTopic(topic, 1, 3, config={"min.insync.replicas": "2"})]).values():
        future.result(10)
    p = NodeTxn(node, cluster.bootstrap_servers, tid, 60000)
    victim = None
    try:
        p.init()

        def one(tag: str, outcome: str) -> None:
            p.begin()
            for i in range(50):
                p.send(topic, b"%s-%02d" % (tag.encode(), i))
            getattr(p, outcome)()

        one("c1", "commit")
        victim = _txn_coordinator(cluster, tid)
        cluster.stop_broker(victim)
        assert _txn_coordinator(cluster, tid) != victim
        one("c2", "commit"); one("a2", "abort"); one("c3", "commit")
        cluster.start_broker(victim)
        victim = None
        one("c4", "commit")
    finally:
        p.close()
        if victim is not None:
            cluster.start_broker(victim)
    committed = [b"%s-%02d" % (tag, i) for tag in (b"c1", b"c2", b"c3", b"c4") for i in range(50)]
    assert read_values_node(node, cluster.bootstrap_servers, topic, "read_committed", count=200) == committed
    assert txn_clients.read_values(request, "confluent-kafka", cluster.bootstrap_servers, topic, "read_committed",
                                   count=200) == committed
