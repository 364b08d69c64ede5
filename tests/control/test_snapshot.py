"""broker.snapshot(path): a consistent image of the data dir taken while producers write,
and a broker started from the copy."""

from __future__ import annotations

import threading

from kafka import KafkaProducer

from testkit.kafka_python import stored_values
from trafka.testing import TrafkaBroker


def test_a_snapshot_taken_under_load_is_a_clean_prefix_of_what_was_acknowledged(broker, tmp_path):
    stop = threading.Event()
    acknowledged: list[int] = []

    def write():
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, acks="all", linger_ms=1)
        n = 0
        while not stop.is_set():
            producer.send("busy", f"{n}".encode(), partition=0).get(timeout=10)
            acknowledged.append(n)
            n += 1
        producer.close()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while len(acknowledged) < 200:
            stop.wait(0.01)
        at_snapshot = len(acknowledged)
        snapshot = broker.snapshot(tmp_path / "snap")
        while len(acknowledged) < at_snapshot + 100:  # the broker went on after the pause
            stop.wait(0.01)
    finally:
        stop.set()
        writer.join()

    with TrafkaBroker(data_dir=snapshot, in_process=True) as restored:
        values = [int(v) for v in stored_values(restored.bootstrap_servers, "busy")]
        assert "truncat" not in restored.log_text().lower()  # recovery found nothing torn
    # Every record acknowledged before the snapshot is there, in order, with nothing after a gap.
    assert values == list(range(len(values)))
    assert at_snapshot <= len(values) < len(acknowledged)
