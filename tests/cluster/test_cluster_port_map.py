"""`cluster.broker.ports`: a simulated cluster laid out on the ports a suite expects, such as a
docker-compose of three brokers 3 ports apart, instead of the configured port + i. Real clients
bootstrap from one broker's configured port and find the others there through Metadata; a
stopped broker comes back on its own port; each listener of a broker can be placed on its own."""

from __future__ import annotations

import socket
import time

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from trafka.testing import TrafkaBroker
from trafka.testing.broker import BrokerFailedToStart
from trafka.testing.rawwire import RawClient
from trafka.wire.types import ZERO_UUID

RECORDS = 3000


def free_run(width: int) -> int:
    """A port p such that p .. p + width - 1 are free now."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + width > 65535:
            continue
        held = []
        try:
            for port in range(base, base + width):
                s = socket.socket()
                held.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise RuntimeError("no run of free ports")


def metadata_brokers(address: str) -> dict[int, int]:
    with RawClient(address) as raw:
        answer = raw.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                     "include_topic_authorized_operations": False})
    return {b.node_id: b.port for b in answer.brokers}


def test_three_brokers_three_ports_apart_serve_real_clients(tmp_path):
    base = free_run(7)
    ports = [base, base + 3, base + 6]
    config = {"cluster.brokers": 3, "cluster.broker.ports": ",".join(map(str, ports)),
              "offsets.topic.num.partitions": 3}
    with TrafkaBroker(data_dir=tmp_path / "data", config=config) as cluster:
        assert cluster.broker_addresses == {i: f"127.0.0.1:{p}" for i, p in enumerate(ports)}
        assert metadata_brokers(f"127.0.0.1:{ports[1]}") == dict(enumerate(ports))
        # A suite's bootstrap list names the compose file's ports, not the process's.
        bootstrap = f"127.0.0.1:{ports[2]}"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic("laid-out", 6, 3)])["laid-out"].result(10)
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
        for i in range(RECORDS):
            producer.produce("laid-out", b"%d" % i)
        assert producer.flush(30) == 0

        cluster.stop_broker(1)
        assert metadata_brokers(f"127.0.0.1:{ports[0]}") == {0: ports[0], 2: ports[2]}
        kafka_producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{ports[0]}", acks="all")
        for i in range(RECORDS, 2 * RECORDS):
            kafka_producer.send("laid-out", b"%d" % i)
        kafka_producer.flush(30)
        kafka_producer.close()
        cluster.start_broker(1)
        assert cluster.broker_addresses[1] == f"127.0.0.1:{ports[1]}"
        assert metadata_brokers(f"127.0.0.1:{ports[1]}") == dict(enumerate(ports))

        consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{ports[1]}", "group.id": "laid-out",
                             "auto.offset.reset": "earliest"})
        consumer.subscribe(["laid-out"])
        seen: set[bytes] = set()
        deadline = time.monotonic() + 60
        while len(seen) < 2 * RECORDS and time.monotonic() < deadline:
            for message in consumer.consume(1000, 0.2):
                if message.error() is None:
                    seen.add(message.value())
        consumer.close()
        assert seen == {b"%d" % i for i in range(2 * RECORDS)}
        reader = KafkaConsumer(bootstrap_servers=f"127.0.0.1:{ports[2]}", auto_offset_reset="earliest",
                               consumer_timeout_ms=5000)
        reader.assign([TopicPartition("laid-out", p) for p in range(6)])
        assert len({r.value for r in reader}) == 2 * RECORDS
        reader.close()


def test_each_listener_of_each_broker_on_its_own_port(tmp_path):
    base = free_run(12)
    layout = [(base, base + 10), (base + 4, base + 1), (base + 7, base + 11)]
    config = {"cluster.brokers": 3, "listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
              "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
              "cluster.broker.ports": ",".join(f"{a}/{b}" for a, b in layout)}
    with TrafkaBroker(data_dir=tmp_path / "data", config=config) as cluster:
        assert metadata_brokers(f"127.0.0.1:{layout[2][0]}") == {i: a for i, (a, _) in enumerate(layout)}
        # Metadata asked on the INTERNAL listener names every broker's INTERNAL port.
        assert metadata_brokers(f"127.0.0.1:{layout[0][1]}") == {i: b for i, (_, b) in enumerate(layout)}
        with RawClient(f"127.0.0.1:{layout[1][1]}") as raw:
            answer = raw.request(3, 12, {"topics": [{"name": "made-here", "topic_id": ZERO_UUID}],
                                         "allow_auto_topic_creation": True,
                                         "include_topic_authorized_operations": False})
            assert answer.topics[0].error_code in (0, 5)  # created (LEADER_NOT_AVAILABLE while electing)
        assert cluster.broker_addresses == {i: f"127.0.0.1:{a}" for i, (a, _) in enumerate(layout)}


@pytest.mark.parametrize("ports, message", [
    ("9092,9095", "names 2 brokers"),
    ("9092,9095,x", "not a port"),
    ("9092,9095,70000", "not a port"),
])
def test_a_port_map_that_does_not_fit_the_cluster_is_refused_at_start(tmp_path, ports, message):
    with pytest.raises(BrokerFailedToStart) as failed:
        with TrafkaBroker(data_dir=tmp_path / "data", config={"cluster.brokers": 3, "cluster.broker.ports": ports}):
            pass
    assert "cluster.broker.ports" in str(failed.value) and message in str(failed.value)
