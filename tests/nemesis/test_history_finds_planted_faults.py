"""The history checker on what real clients saw from a real broker, with a fault planted where
no client can cause it: acknowledged records cut from the segment file while the broker was
down (a disk that lost them), and one value written twice by a producer without idempotence.
A checker that cannot find these could not find them under a nemesis either."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, Producer

from testkit.groups import create_topic
from trafka.testing import TrafkaBroker
from trafka.testing.history import History


def _produce(broker, history: History, values: list[bytes], **settings) -> None:
    """Each value as its own batch (flushed one by one), its acknowledged offset recorded."""
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0, **settings})

    def delivered(err, message):
        assert err is None, err
        history.produced(message.topic(), message.partition(), message.offset(), message.value())
    for value in values:
        producer.produce("ledger", value, partition=0, callback=delivered)
        assert producer.flush(10) == 0


def _read(broker, history: History, name: str, want: int) -> None:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": name,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe(["ledger"])
    got, deadline = 0, time.monotonic() + 30
    while got < want and time.monotonic() < deadline:
        for m in consumer.consume(100, 0.5):
            if m.error() is None:
                history.consumed(name, m.topic(), m.partition(), m.offset(), m.value())
                got += 1
    consumer.close()


def test_records_cut_from_the_disk_behind_the_brokers_back_are_found_lost(tmp_path):
    history = History()
    with TrafkaBroker(data_dir=tmp_path / "data") as broker:
        create_topic(broker.bootstrap_servers, "ledger", 1)
        _produce(broker, history, [b"entry-%03d" % i for i in range(30)])
        broker.kill()
        [segment] = (tmp_path / "data").glob("ledger-0/*.log")
        size = segment.stat().st_size
        assert size % 30 == 0  # thirty batches of one record, each the same size
        with open(segment, "r+b") as f:
            f.truncate(size // 30 * 25)  # offsets 25-29 are gone
        broker.start()
        _produce(broker, history, [b"entry-%03d" % i for i in range(30, 40)])  # land at 25-34
        _read(broker, history, "reader", 35)
    report = history.check()
    assert not report.ok
    assert sorted(e["value"] for e in report.lost) == [b"entry-%03d" % i for i in range(25, 30)]
    assert len(report.changed) == 5  # offsets 25-29 were acknowledged twice, with different values
    assert not report.duplicated


def test_a_value_written_twice_is_found_duplicated(tmp_path):
    history = History()
    with TrafkaBroker(data_dir=tmp_path / "data") as broker:
        create_topic(broker.bootstrap_servers, "ledger", 1)
        values = [b"entry-%03d" % i for i in range(20)]
        _produce(broker, history, values[:10] + [values[5]] + values[10:], **{"enable.idempotence": False})
        _read(broker, history, "reader", 21)
    report = history.check()
    assert report.duplicated == [{"value": b"entry-005", "positions": [("ledger", 0, 5), ("ledger", 0, 10)]}]
    assert not report.lost and not report.changed and not report.ok
