"""The control endpoints over HTTP, on a child-process broker's console listener: what
`TrafkaBroker` uses for a broker it did not start in process, and what any language can call."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import confluent_kafka
import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from trafka.testing import TrafkaBroker


@pytest.fixture
def process_broker(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data") as running:
        yield running


def call(broker, method: str, path: str, body=None, raw: bytes | None = None) -> tuple[int, object]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(broker.console_url.rstrip("/") + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_clock_and_faults_over_http(process_broker):
    broker = process_broker
    status, clock = call(broker, "GET", "/api/v1/clock")
    assert status == 200 and clock["offset_ms"] == 0
    status, clock = call(broker, "POST", "/api/v1/clock/advance", {"ms": 7_200_000})
    assert status == 200 and clock["offset_ms"] == 7_200_000
    assert call(broker, "POST", "/api/v1/clock/advance", {"ms": -1})[0] == 400

    status, fault = call(broker, "POST", "/api/v1/faults", {"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "count": 3})
    assert status == 201 and fault == {"id": 1, "api": "Produce", "api_key": 0, "error": "NOT_LEADER_OR_FOLLOWER",
                                       "remaining": 3, "fired": 0}
    status, delay = call(broker, "POST", "/api/v1/faults", {"api": "Metadata", "delay_ms": 1500, "count": 1})
    assert status == 201
    status, listed = call(broker, "GET", "/api/v1/faults")
    assert [f["id"] for f in listed] == [1, delay["id"]]
    assert call(broker, "DELETE", f"/api/v1/faults/{delay['id']}") == (200, {"removed": 1})
    assert call(broker, "DELETE", f"/api/v1/faults/{delay['id']}")[0] == 404

    status, answer = call(broker, "POST", "/api/v1/faults", {"api": "Produc", "error": "NOT_LEADER_OR_FOLLOWER"})
    assert status == 400 and "unknown API 'Produc'" in answer["error"]
    status, answer = call(broker, "POST", "/api/v1/faults", {"api": "Produce", "error": "NOT_LEADER"})
    assert status == 400 and "unknown error 'NOT_LEADER'" in answer["error"]
    status, answer = call(broker, "POST", "/api/v1/faults", raw=b"{not json")
    assert status == 400 and "JSON" in answer["error"]
    assert call(broker, "DELETE", "/api/v1/faults") == (200, {"removed": 1})


def test_the_python_api_steers_a_child_process_broker(process_broker, tmp_path):
    """advance_clock, inject_fault and snapshot on a subprocess broker go over HTTP."""
    broker = process_broker
    assert broker.advance_clock(1000)["offset_ms"] == 1000
    with pytest.raises(ValueError, match="unknown error"):
        broker.inject_fault("Produce", error="NO_SUCH_ERROR")
    reports = []
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True,
                                         "retry.backoff.ms": 50})
    with broker.inject_fault("Produce", error="NOT_LEADER_OR_FOLLOWER", count=3):
        producer.produce("over-http", b"delivered", partition=0, on_delivery=lambda err, msg: reports.append(err))
        assert producer.flush(30) == 0
        assert broker.faults() == []
    assert reports == [None]

    snapshot = broker.snapshot(tmp_path / "snapshot")
    with TrafkaBroker(data_dir=snapshot, in_process=True) as restored:
        consumer = KafkaConsumer(bootstrap_servers=restored.bootstrap_servers, auto_offset_reset="earliest",
                                 consumer_timeout_ms=2000)
        consumer.assign([TopicPartition("over-http", 0)])
        assert [r.value for r in consumer] == [b"delivered"]
        consumer.close()
        assert restored.clock()["offset_ms"] == 1000  # the moved clock travels with the snapshot
    with pytest.raises(ValueError, match="already exists"):
        broker.snapshot(tmp_path / "snapshot")


def test_a_child_process_broker_down_for_a_while_comes_back(process_broker):
    broker = process_broker
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, retries=20, retry_backoff_ms=100,
                             reconnect_backoff_max_ms=200)
    try:
        producer.send("outage", b"before").get(timeout=10)
        broker.inject_fault(down_ms=1500)
        start = time.monotonic()
        producer.send("outage", b"after").get(timeout=30)
        assert time.monotonic() - start > 0.5  # it had to wait for the broker to come back
    finally:
        producer.close()


def test_control_answers_only_on_a_loopback_listener_unless_enabled(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "a", in_process=True) as broker:
        inner = broker._thread_broker.broker
        inner.console_url = "http://192.0.2.10:9644/"  # as if the console listened on a routable address
        status, answer = call(broker, "GET", "/api/v1/clock")
        assert status == 403 and "console.control.enabled=true" in answer["error"]
        assert call(broker, "GET", "/health")[0] == 200  # the rest of the console still answers
    with TrafkaBroker(data_dir=tmp_path / "b", config={"console.control.enabled": "true"}, in_process=True) as broker:
        broker._thread_broker.broker.console_url = "http://192.0.2.10:9644/"
        assert call(broker, "GET", "/api/v1/clock")[0] == 200
