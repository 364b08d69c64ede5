"""Durability: acknowledged records survive SIGKILL; flush.ms fsyncs without new appends."""

from __future__ import annotations

import threading

import pytest
from kafka import KafkaProducer
from kafka.admin import NewTopic

from trafka.testing.waiting import wait_until
from testkit.kafka_python import admin_client, read_all


def test_every_acknowledged_record_survives_sigkill(trafka_broker):
    bootstrap = trafka_broker.bootstrap_servers
    admin = admin_client(bootstrap)
    admin.create_topics([NewTopic("orders", 1, 1, topic_configs={"segment.bytes": "4096"})])
    admin.close()
    acknowledged: dict[int, bytes] = {}
    stop = threading.Event()

    def write():
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=2, retries=0,
                                 request_timeout_ms=2000, max_block_ms=2000)
        n = 0
        while not stop.is_set():
            futures = []
            try:
                for _ in range(20):
                    value = b"order-%06d" % n
                    futures.append((value, producer.send("orders", value, partition=0)))
                    n += 1
            except Exception:
                stop.set()  # send() itself times out once the broker is gone
            for value, future in futures:
                try:
                    acknowledged[future.get(timeout=3).offset] = value
                except Exception:
                    # The broker is gone: the rest of this round can only time out one by one.
                    stop.set()
                    break
        try:
            producer.close(timeout=1)
        except Exception:
            pass  # its broker was killed; what counts is what the restarted broker holds

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    wait_until(lambda: len(acknowledged) >= 300, 15, "300 acknowledged records")
    trafka_broker.kill()  # SIGKILL while the producer is writing
    stop.set()
    writer.join(20)
    assert not writer.is_alive()
    trafka_broker.start()
    records = read_all(bootstrap, "orders")
    stored = {r.offset: r.value for r in records}
    assert all(stored.get(offset) == value for offset, value in acknowledged.items())
    # In order, with the offsets they were acknowledged with, and nothing in between lost.
    assert [r.offset for r in records] == list(range(len(records)))
    assert [r.value for r in records] == sorted(r.value for r in records)
    assert len(records) >= len(acknowledged)


@pytest.mark.trafka_config({"log.flush.scheduler.interval.ms": 100})
def test_flush_ms_fsyncs_without_new_appends(trafka_broker):
    """flush.ms is a minute of broker time, passed with advance_clock (which runs the flush
    check it made due before returning): not synced half-way, synced once it has passed."""
    bootstrap = trafka_broker.bootstrap_servers
    admin = admin_client(bootstrap)
    admin.create_topics([NewTopic("flushed", 1, 1, topic_configs={"flush.ms": "60000"})])
    admin.close()
    recovery_point = trafka_broker.data_dir / "flushed-0" / "recovery-point"
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(5):
        producer.send("flushed", b"%d" % i, partition=0)
    producer.flush()
    producer.close()

    def flushed():
        return recovery_point.exists() and recovery_point.read_text().strip() == "5"

    trafka_broker.advance_clock(30_000)
    assert not flushed()  # appends alone, and half of flush.ms, did not sync
    # With no further append, the flush scheduler fsyncs once flush.ms has passed.
    trafka_broker.advance_clock(31_000)
    wait_until(flushed, 5, "the flush scheduler to fsync and move the recovery point")
