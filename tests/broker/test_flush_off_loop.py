"""A flush.messages fsync runs in a worker thread, not on the broker's event loop: while one
producer's fsync is held (an in-process broker whose os.fsync waits on a gate the test opens),
another connection is answered; then the producer gets its answer, after its data is on disk.
No timing: if the fsync ran on the loop, the second connection would never be answered while
the gate is shut."""

from __future__ import annotations

import os
import threading

import pytest

from tests.broker.test_produce_fetch_wire import PRODUCE_V, batch, create, produce_body
from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient


@pytest.fixture
def gated_fsync(monkeypatch):
    """os.fsync that, while armed, blocks its first caller until the test opens the gate."""
    real = os.fsync
    state = {"armed": False, "held": threading.Event(), "gate": threading.Event()}

    def fsync(fd):
        if state["armed"]:
            state["armed"] = False
            state["held"].set()
            assert state["gate"].wait(30), "the test never opened the gate"
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    yield state
    state["gate"].set()


def test_a_flush_messages_fsync_does_not_hold_other_connections(tmp_path, gated_fsync):
    broker = TrafkaBroker(data_dir=tmp_path / "data", in_process=True).start()
    try:
        with RawClient(broker.bootstrap_servers, "setup") as setup:
            assert create(setup, "synced", configs={"flush.messages": "1"}).error_code == 0
        producer = RawClient(broker.bootstrap_servers, "producer")
        other = RawClient(broker.bootstrap_servers, "other")
        gated_fsync["armed"] = True
        producer.send(producer.frame(0, PRODUCE_V, produce_body("synced", batch(b"durable"))))
        assert gated_fsync["held"].wait(10), "the produce never asked for an fsync"
        # The fsync is held; the loop still answers another connection.
        answer = other.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
        assert answer.error_code == 0
        gated_fsync["gate"].set()
        _, produced = producer.receive(0, PRODUCE_V)
        assert produced.responses[0].partition_responses[0].error_code == 0
        producer.close()
        other.close()
    finally:
        gated_fsync["gate"].set()
        broker.stop()


def test_a_deferred_partitions_first_open_does_not_hold_other_connections(tmp_path, monkeypatch):
    """A partition closed cleanly is opened at its first use (PartitionLog.load_deferred); the
    broker opens it in a worker thread. While the open is held (log_loader.load waiting on a
    gate), another connection is answered; then the fetch gets its records."""
    import trafka.storage.log as log_module

    data = tmp_path / "data"
    broker = TrafkaBroker(data_dir=data, in_process=True).start()
    with RawClient(broker.bootstrap_servers, "setup") as setup:
        assert create(setup, "cold").error_code == 0
        setup.send(setup.produce_frame("cold", 0, batch(b"kept")))
        setup.receive(0, 7)
    broker.stop()

    real_load, held, gate = log_module.load, threading.Event(), threading.Event()

    def gated_load(partition_log, **kwargs):
        if partition_log.directory.name == "cold-0":
            held.set()
            assert gate.wait(30), "the test never opened the gate"
        return real_load(partition_log, **kwargs)

    monkeypatch.setattr(log_module, "load", gated_load)
    broker = TrafkaBroker(data_dir=data, in_process=True).start()
    try:
        reader = RawClient(broker.bootstrap_servers, "reader")
        other = RawClient(broker.bootstrap_servers, "other")
        reader.send(reader.frame(2, 1, {"replica_id": -1, "topics": [
            {"name": "cold", "partitions": [{"partition_index": 0, "timestamp": -1}]}]}))
        assert held.wait(10), "the partition was never opened"
        answer = other.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
        assert answer.error_code == 0
        gate.set()
        _, listed = reader.receive(2, 1)
        assert listed.topics[0].partitions[0].offset == 1
        reader.close()
        other.close()
    finally:
        gate.set()
        broker.stop()
