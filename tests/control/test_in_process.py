"""TrafkaBroker(in_process=True): the broker on trio in a thread of the test process, with the
same surface as the process broker (stop, kill, restart, control calls)."""

from __future__ import annotations

import pytest
from kafka import KafkaProducer

from testkit.kafka_python import stored_values
from trafka.testing import TrafkaBroker
from trafka.testing.broker import BrokerFailedToStart


def _produce(bootstrap: str, topic: str, count: int) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for n in range(count):
        producer.send(topic, f"v{n}".encode(), partition=0)
    producer.flush()
    producer.close()


def test_records_survive_stop_kill_and_restart_on_the_same_port(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", in_process=True) as broker:
        port = broker.port
        _produce(broker.bootstrap_servers, "kept", 5)
        broker.restart()
        assert broker.port == port
        _produce(broker.bootstrap_servers, "kept", 5)
        broker.restart(kill=True)  # abrupt: no flush, no clean-shutdown marker
        assert "no clean shutdown marker" in broker.log_text()
        assert stored_values(broker.bootstrap_servers, "kept") == [f"v{n}".encode() for n in (*range(5), *range(5))]
        assert broker.running
    assert not broker.running


def test_two_in_process_brokers_run_side_by_side(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "a", in_process=True) as a, TrafkaBroker(data_dir=tmp_path / "b", in_process=True) as b:
        _produce(a.bootstrap_servers, "only-in-a", 3)
        a.advance_clock(1000)
        assert b.clock()["offset_ms"] == 0
        assert stored_values(b.bootstrap_servers, "only-in-a") == []
        assert len(stored_values(a.bootstrap_servers, "only-in-a")) == 3


def test_a_bad_setting_fails_the_start_with_its_name(tmp_path):
    broker = TrafkaBroker(data_dir=tmp_path / "data", config={"num.partitions": "many"}, in_process=True)
    with pytest.raises(BrokerFailedToStart, match="num.partitions"):
        broker.start()
    assert not broker.running


def test_control_calls_need_a_running_broker(tmp_path):
    broker = TrafkaBroker(data_dir=tmp_path / "data", in_process=True)
    with pytest.raises(RuntimeError, match="not running"):
        broker.advance_clock(1)


def test_a_taken_port_fails_the_start_with_one_clear_line(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "a", in_process=True) as first:
        second = TrafkaBroker(data_dir=tmp_path / "b", port=first.port, in_process=True)
        with pytest.raises(BrokerFailedToStart, match=f"cannot listen on 127.0.0.1:{first.port}: Address already in use"):
            second.start()
        assert not second.running
