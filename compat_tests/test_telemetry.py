"""KIP-714 with the Java 4.3 producer (enable.metrics.push is on by default): once a
client-metrics subscription matches it, it pushes its metrics to trafka, which keeps them
decoded; clientInstanceId is the id trafka assigned."""

from __future__ import annotations

import base64
import json
import time
import uuid
import urllib.request

import pytest

from trafka.testing.rawwire import RawClient


@pytest.mark.compat_client("java-4.3.0")
def test_java_producer_pushes_its_metrics(java_client_43, trafka_session_broker):
    broker = trafka_session_broker
    with RawClient(broker.bootstrap_servers) as raw:
        body = raw.request(44, 1, {"resources": [{"resource_type": 16, "resource_name": "java-producers", "configs": [
            {"name": "metrics", "config_operation": 0, "value": "org.apache.kafka.producer."},
            {"name": "interval.ms", "config_operation": 0, "value": "500"},
            {"name": "match", "config_operation": 0, "value": "client_id=telemetry-java"}]}], "validate_only": False})
        assert body.responses[0].error_code == 0
    k = java_client_43
    producer = k.make_producer({"bootstrap.servers": broker.bootstrap_servers, "client.id": "telemetry-java"})
    try:
        producer.send("telemetry-topic", b"k", b"v")
        producer.flush()
        # Kafka's Uuid.toString is URL-safe base64; the console shows the UUID's usual form.
        kafka_id = str(k.call(producer.j.clientInstanceId, k.jvm.java.time.Duration.ofSeconds(10)))
        instance = str(uuid.UUID(bytes=base64.urlsafe_b64decode(kafka_id + "==")))
        end, mine = time.monotonic() + 30, None
        while time.monotonic() < end:
            with urllib.request.urlopen(broker.console_url + "api/v1/broker", timeout=10) as response:
                telemetry = json.loads(response.read())["telemetry"]
            mine = next((t for t in telemetry if t["instance_id"] == instance), None)
            if mine and mine["pushes"] and mine["metrics"]:
                break
            time.sleep(0.3)
        assert mine is not None, f"no telemetry from instance {instance}"
        assert mine["client_id"] == "telemetry-java" and mine["requested_metrics"] == ["org.apache.kafka.producer."]
        names = {m["name"] for m in mine["metrics"]}
        assert names and all(name.startswith("org.apache.kafka.producer.") for name in names), names
    finally:
        producer.close()
        with RawClient(broker.bootstrap_servers) as raw:  # the session broker is shared: remove the subscription
            body = raw.request(44, 1, {"resources": [{"resource_type": 16, "resource_name": "java-producers", "configs": [
                {"name": name, "config_operation": 1, "value": None} for name in ("metrics", "interval.ms", "match")]}],
                "validate_only": False})
            assert body.responses[0].error_code == 0
            assert raw.request(74, 0, {}).config_resources == []
