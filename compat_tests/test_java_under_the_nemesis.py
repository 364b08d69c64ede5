"""The Java 4.3 client under a seeded nemesis on a simulated cluster of three (docs/nemesis.md):
an idempotent KafkaProducer writing while brokers stop, get killed and come back, leaders move
and requests fail; then a KafkaConsumer reads everything back and the history checker finds
nothing lost, changed or duplicated."""

from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from trafka.testing.history import History


@pytest.mark.compat_client("java-4.3.0")
def test_a_java_idempotent_producer_under_the_nemesis(java_client_43, trafka_cluster):
    bootstrap = trafka_cluster.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("java-ledger", 3, 3, config={"min.insync.replicas": "2"})])["java-ledger"].result(20)
    history, stop = History(), threading.Event()
    producer = java_client_43.make_producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": "true",
                                             "delivery.timeout.ms": "120000", "linger.ms": "5"})

    def produce() -> None:
        i = 0
        while not stop.is_set():
            pending = [(b"j-%d" % n, producer.send_async("java-ledger", value=b"j-%d" % n)) for n in range(i, i + 200)]
            i += 200
            for value, future in pending:
                try:
                    meta = future.get(120)
                except Exception:  # not acknowledged: not in the history
                    continue
                history.produced(meta.topic, meta.partition, meta.offset, value)

    writer = threading.Thread(target=produce, daemon=True)
    writer.start()
    report = trafka_cluster.nemesis(seed=5, duration_s=8, max_down=1)
    stop.set()
    writer.join(180)
    assert not writer.is_alive()
    consumer = java_client_43.make_consumer({"bootstrap.servers": bootstrap, "group.id": "java-check"})
    consumer.subscribe(["java-ledger"])
    quiet = time.monotonic()
    while time.monotonic() - quiet < 4:
        for record in consumer.poll(500):
            history.consumed("java-check", record.topic, record.partition, record.offset, record.value)
            quiet = time.monotonic()
    checked = history.check()
    assert checked.acknowledged > 1000
    assert checked.ok and not checked.unseen, f"{checked.summary()}\nfaults: {report['events']}"
