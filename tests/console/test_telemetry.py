"""Client telemetry (KIP-714) over the raw protocol against a real broker: client-metrics
subscriptions as config resources, GetTelemetrySubscriptions, PushTelemetry's errors in
Kafka's order, and the pushed OTLP metrics decoded on the console's broker page (headless
chromium) and, for the chosen names, on /metrics."""

from __future__ import annotations

import urllib.request
import uuid

import pytest
from playwright.sync_api import expect

from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient
from trafka.wire import records
from trafka.wire.errors import ErrorCode
from trafka.wire.types import ZERO_UUID

SET, DELETE = 0, 1


@pytest.fixture
def broker(tmp_path):
    config = {"telemetry.export.metrics": "org.apache.kafka.producer.record"}
    with TrafkaBroker(data_dir=tmp_path / "data", in_process=True, config=config) as running:
        yield running


def subscribe(raw: RawClient, name: str, **configs) -> int:
    body = raw.request(44, 1, {"resources": [{"resource_type": 16, "resource_name": name, "configs": [
        {"name": k.replace("_", "."), "config_operation": SET, "value": str(v)} for k, v in configs.items()]}],
        "validate_only": False})
    return body.responses[0].error_code


def otlp(value: float) -> bytes:
    from opentelemetry.proto.common.v1 import common_pb2
    from opentelemetry.proto.metrics.v1 import metrics_pb2

    data = metrics_pb2.MetricsData()
    metric = data.resource_metrics.add().scope_metrics.add().metrics.add()
    metric.name = "org.apache.kafka.producer.record.send.rate"
    point = metric.gauge.data_points.add()
    point.as_double = value
    point.attributes.append(common_pb2.KeyValue(key="client_id", value=common_pb2.AnyValue(string_value="tele-1")))
    return data.SerializeToString()


def test_subscriptions_pushes_and_their_errors(broker, page):
    with RawClient(broker.bootstrap_servers, client_id="tele-1") as raw:
        raw.request(18, 3, {"client_software_name": "pushy", "client_software_version": "9.9"})
        assert subscribe(raw, "producers", metrics="org.apache.kafka.producer.", interval_ms=100,
                         match="client_software_name=push.*") == ErrorCode.NONE
        assert subscribe(raw, "bad", interval_ms=50) == ErrorCode.INVALID_CONFIG
        assert subscribe(raw, "bad", match="nobody=x") == ErrorCode.INVALID_CONFIG
        listed = raw.request(74, 0, {}).config_resources
        assert [(r.resource_name, r.resource_type) for r in listed] == [("producers", 16)]

        got = raw.request(71, 0, {"client_instance_id": ZERO_UUID})
        assert got.error_code == 0 and got.client_instance_id != ZERO_UUID
        assert got.requested_metrics == ["org.apache.kafka.producer."] and got.push_interval_ms == 100
        assert set(got.accepted_compression_types) == {1, 2, 3, 4} and got.delta_temporality
        instance, subscription = got.client_instance_id, got.subscription_id

        def push(payload: bytes, *, instance_id=instance, subscription_id=subscription, compression=0, terminating=False):
            return raw.request(72, 0, {"client_instance_id": instance_id, "subscription_id": subscription_id,
                                       "terminating": terminating, "compression_type": compression, "metrics": payload}).error_code

        assert push(otlp(1.0), instance_id=ZERO_UUID) == ErrorCode.INVALID_REQUEST
        assert push(otlp(1.0), instance_id=uuid.uuid4()) == ErrorCode.UNKNOWN_SUBSCRIPTION_ID
        assert push(otlp(1.0), subscription_id=subscription + 1) == ErrorCode.UNKNOWN_SUBSCRIPTION_ID
        assert push(otlp(1.0), compression=9) == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        assert push(b"\xff" * 2_000_000) == ErrorCode.TELEMETRY_TOO_LARGE
        assert push(records.compress(records.Compression.ZSTD, otlp(42.5)), compression=4) == ErrorCode.NONE
        assert push(otlp(43.0)) == ErrorCode.THROTTLING_QUOTA_EXCEEDED  # sooner than interval.ms
        assert push(otlp(44.0), terminating=True) == ErrorCode.NONE  # a terminating push is always taken
        assert push(otlp(45.0), terminating=True) == ErrorCode.INVALID_REQUEST  # nothing after it

    page.goto(broker.console_url + "broker")
    row = page.locator(f'#telemetry tr[data-instance="{instance}"]')
    expect(row.locator(".client-id")).to_have_text("tele-1")
    expect(row.locator(".pushes")).to_have_text("2")
    row.locator("summary").click()
    expect(row.locator('tr[data-metric="org.apache.kafka.producer.record.send.rate"] .value')).to_have_text("44")
    with urllib.request.urlopen(broker.console_url + "metrics", timeout=10) as response:
        metrics = response.read().decode()
    assert (f'trafka_client_metric{{attributes="client_id=tele-1",client_id="tele-1",client_instance_id="{instance}",'
            f'name="org.apache.kafka.producer.record.send.rate"}} 44.0') in metrics


def test_a_client_no_subscription_matches_is_asked_for_nothing(broker):
    with RawClient(broker.bootstrap_servers, client_id="quiet") as raw:
        assert subscribe(raw, "only-others", metrics="*", match="client_id=someone-else") == ErrorCode.NONE
        got = raw.request(71, 0, {"client_instance_id": ZERO_UUID})
        assert got.error_code == 0 and got.requested_metrics == []
    broker.restart()
    with RawClient(broker.bootstrap_servers) as raw:  # the subscription is durable
        assert [r.resource_name for r in raw.request(74, 0, {}).config_resources] == ["only-others"]
        [described] = raw.request(32, 4, {"resources": [{"resource_type": 16, "resource_name": "only-others",
                                                          "configuration_keys": None}],
                                          "include_synonyms": False, "include_documentation": False}).results
        assert {c.name: c.value for c in described.configs} == {"metrics": "*", "interval.ms": "300000",
                                                                "match": "client_id=someone-else"}
