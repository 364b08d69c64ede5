"""A stopped broker of a simulated cluster whose port another socket took meanwhile (a client's
ephemeral port can land on it) starts again on a free port instead of ending the whole process;
clients find it through Metadata. Found by the nemesis soak: the process died with 'cannot
listen ... Address already in use' when it started a killed broker."""

from __future__ import annotations

import socket

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from trafka.testing.waiting import wait_until


def _read_kept(bootstrap: str, want: int) -> set[bytes]:
    """The values of topic `kept` a new group reads from the start (up to 30 s for `want`)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "check", "auto.offset.reset": "earliest"})
    consumer.subscribe(["kept"])
    values: set[bytes] = set()
    for _ in range(60):
        for m in consumer.consume(500, 0.5):
            if m.error() is None:
                values.add(m.value())
        if len(values) >= want:
            break
    consumer.close()
    return values


def test_a_broker_whose_port_was_taken_starts_on_another(trafka_cluster):
    cluster = trafka_cluster
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    admin.create_topics([NewTopic("kept", 3, 3)])["kept"].result(10)
    before = {b["node_id"]: b["port"] for b in cluster.brokers()}
    cluster.kill_broker(1)
    squatter = socket.socket()
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    squatter.bind(("127.0.0.1", before[1]))
    squatter.listen()
    try:
        cluster.start_broker(1)
        # It tries its old port for a second, then listens on a free one.
        wait_until(lambda: {b["node_id"]: b["port"] for b in cluster.brokers()}[1] != before[1], timeout=15,
                   message="broker 1 listening again on another port")
        after = {b["node_id"]: (b["alive"], b["port"]) for b in cluster.brokers()}
        assert after[1][0], after
        assert after[0] == (True, before[0]) and after[2] == (True, before[2])
        producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
        for i in range(300):
            producer.produce("kept", b"v%d" % i, partition=i % 3)
        assert producer.flush(20) == 0
        wait_until(lambda: all(1 in cluster.partition_state("kept", p)["isr"] for p in range(3)), timeout=15,
                   message="broker 1 back in every ISR")
        for partition in range(3):  # clients now reach broker 1 at its new port
            cluster.move_leader("kept", partition, 1)
        assert len(_read_kept(cluster.bootstrap_servers, 300)) == 300
    finally:
        squatter.close()


def test_a_restarted_cluster_comes_back_on_every_brokers_own_port(trafka_cluster):
    """The harness's restart brings each broker back where it listened (not broker 0's port + i,
    which nobody held for it: a client's ephemeral port may sit there, as one did in CI), so a
    client that knows only broker 2's address finds the cluster again."""
    cluster = trafka_cluster
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    admin.create_topics([NewTopic("kept", 3, 3)])["kept"].result(10)
    before = dict(cluster.broker_addresses)
    producer = Producer({"bootstrap.servers": before[2], "acks": "all"})
    for i in range(600):
        producer.produce("kept", b"v%d" % i, partition=i % 3)
    assert producer.flush(20) == 0
    cluster.restart()
    assert cluster.broker_addresses == before
    assert {b["node_id"]: f"{b['host']}:{b['port']}" for b in cluster.brokers()} == before
    for i in range(600, 1200):
        producer.produce("kept", b"v%d" % i, partition=i % 3)
    assert producer.flush(30) == 0
    assert _read_kept(before[2], 1200) == {b"v%d" % i for i in range(1200)}
