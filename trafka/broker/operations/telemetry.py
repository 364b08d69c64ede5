"""Client telemetry (KIP-714): client-metrics subscriptions, GetTelemetrySubscriptions and
PushTelemetry, as Kafka's ClientMetricsManager serves them, and what Kafka does not do with
them: keep each client's latest pushed metrics, decoded, for the console and /metrics.

Subscriptions are `client-metrics` config resources (type 16), set with
IncrementalAlterConfigs and read with DescribeConfigs / ListConfigResources:
  metrics      metric-name prefixes to push ("*": all; empty: none)
  interval.ms  push interval, 100..3600000 (default 300000)
  match        key=regex pairs a client must all match: client_instance_id, client_id,
               client_software_name, client_software_version, client_source_address,
               client_source_port (none: every client)
Kept as Kafka keeps them: ConfigRecords on resource type CLIENT_METRICS in the metadata log
(trafka/broker/metadata/image.py), fsynced before the answer and applied only then.

A client's subscription is every matching subscription's metrics at the shortest interval of
them; its id is a CRC-32C over the metrics, the interval and the client instance id, so it
changes whenever the subscription does and a push with an old id is UNKNOWN_SUBSCRIPTION_ID.
Pushed metrics are OTLP protobuf (`MetricsData`), decoded with the opentelemetry-proto
package after the client's compression is undone.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass, field

from trafka.broker.metadata.image import ClusterMetadata
from trafka.broker.metadata.records import CLIENT_METRICS, config_changes, replay_configs
from trafka.storage.errors import InvalidConfig
from trafka.wire import records as rec
from trafka.wire.errors import ErrorCode
from trafka.wire.types import ZERO_UUID

DEFAULT_INTERVAL_MS = 300_000
MIN_INTERVAL_MS, MAX_INTERVAL_MS = 100, 3_600_000
MATCH_KEYS = ("client_instance_id", "client_id", "client_software_name", "client_software_version",
              "client_source_address", "client_source_port")
SUBSCRIPTION_CONFIGS = {
    "metrics": "metric-name prefixes clients matching this subscription push (\"*\": all)",
    "interval.ms": "how often matching clients push, in ms (100..3600000)",
    "match": "key=regex pairs a client must all match (client_id, client_software_name, ...)",
}
# What this broker decompresses (records.decompress), Kafka's order of preference.
ACCEPTED_COMPRESSION = (rec.Compression.ZSTD, rec.Compression.LZ4, rec.Compression.GZIP, rec.Compression.SNAPPY)


@dataclass
class ClientTelemetry:
    """One client instance: who it is, its subscription, and what it pushed last."""

    instance_id: uuid.UUID
    client_id: str
    software_name: str | None
    software_version: str | None
    source_address: str
    source_port: str
    subscription_id: int = 0
    metrics: list[str] = field(default_factory=list)
    interval_ms: int = DEFAULT_INTERVAL_MS
    last_push_ms: int | None = None
    terminated: bool = False
    pushes: int = 0
    latest: list[dict] = field(default_factory=list)  # [{"name", "value", "attributes"}]


def _parse_list(text: str) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


class ClientMetricsManager:
    def __init__(self, metadata, config):
        """`metadata`: the broker's ClusterMetadata (ClusterMetadata.of for the other forms)."""
        self.config = config
        self.subscriptions: dict[str, dict[str, str]] = {}
        self.clients: dict[uuid.UUID, ClientTelemetry] = {}
        self.metadata = ClusterMetadata.of(metadata)
        self.metadata.register(["ConfigRecord"], self._replay)

    def _replay(self, record) -> None:
        if record.fields["resource_type"] == CLIENT_METRICS:
            replay_configs(self.subscriptions, record)

    # --- subscriptions (config resources) -------------------------------------------------------

    def validate(self, values: dict[str, str]) -> None:
        """Kafka's ClientMetricsConfigs.validate: InvalidConfig with its kind of message."""
        for name, text in values.items():
            if name not in SUBSCRIPTION_CONFIGS:
                raise InvalidConfig(f"Unknown client metrics configuration: {name}")
            if name == "interval.ms":
                try:
                    interval = int(text)
                except (TypeError, ValueError):
                    raise InvalidConfig(f"Invalid value {text} for configuration interval.ms: Not a number of type INT") from None
                if not MIN_INTERVAL_MS <= interval <= MAX_INTERVAL_MS:
                    raise InvalidConfig(f"Invalid value {interval} for interval.ms, interval must be between "
                                        f"{MIN_INTERVAL_MS} and {MAX_INTERVAL_MS}")
            if name == "match":
                for pair in _parse_list(text):
                    key, sep, pattern = pair.partition("=")
                    if not sep or key.strip() not in MATCH_KEYS:
                        raise InvalidConfig(f"Illegal client matching pattern: {pair} (keys: {', '.join(MATCH_KEYS)})")
                    try:
                        re.compile(pattern)
                    except re.error as exc:
                        raise InvalidConfig(f"Illegal regex pattern for {key}: {pattern} ({exc})") from None

    def alter(self, name: str, values: dict[str, str], validate_only: bool) -> None:
        self.validate(values)
        if validate_only:
            return
        self.metadata.write(config_changes(CLIENT_METRICS, name, self.subscriptions.get(name, {}),
                                           {k: str(v) for k, v in values.items()}))
        for client in self.clients.values():  # the next push tells them their subscription changed
            self._subscribe(client)

    def overrides(self, name: str) -> dict[str, str]:
        return dict(self.subscriptions.get(name, {}))

    def names(self) -> list[str]:
        return sorted(self.subscriptions)

    # --- the two requests -----------------------------------------------------------------------

    def get_subscriptions(self, instance_id: uuid.UUID, client_id: str, software_name: str | None,
                          software_version: str | None, peer: str) -> tuple[ErrorCode, ClientTelemetry | None]:
        if instance_id == ZERO_UUID:
            instance_id = uuid.uuid4()
        client = self.clients.get(instance_id)
        if client is None:
            address, _, port = peer.rpartition(":")
            client = self.clients[instance_id] = ClientTelemetry(instance_id, client_id, software_name, software_version,
                                                                 address, port)
        self._subscribe(client)
        return ErrorCode.NONE, client

    def push(self, instance_id: uuid.UUID, subscription_id: int, terminating: bool, compression: int,
             data: bytes) -> ErrorCode:
        """Kafka's checks, in its order, then the metrics decoded and kept."""
        if instance_id == ZERO_UUID:
            return ErrorCode.INVALID_REQUEST
        client = self.clients.get(instance_id)
        if client is None or client.subscription_id != subscription_id:
            return ErrorCode.UNKNOWN_SUBSCRIPTION_ID
        if client.terminated:
            return ErrorCode.INVALID_REQUEST  # nothing may follow a terminating push
        now = int(time.time() * 1000)
        if not terminating and client.last_push_ms is not None and now - client.last_push_ms < client.interval_ms:
            return ErrorCode.THROTTLING_QUOTA_EXCEEDED
        try:
            codec = rec.Compression(compression)
        except ValueError:
            return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        if codec is not rec.Compression.NONE and codec not in ACCEPTED_COMPRESSION:
            return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        if len(data) > self.config["telemetry.max.bytes"]:
            return ErrorCode.TELEMETRY_TOO_LARGE
        try:
            raw = rec.decompress(codec, data)
        except rec.CorruptRecordError:
            return ErrorCode.INVALID_RECORD
        if len(raw) > self.config["telemetry.max.bytes"]:
            return ErrorCode.TELEMETRY_TOO_LARGE
        try:
            latest = decode_metrics(raw)
        except ValueError:
            return ErrorCode.INVALID_RECORD
        client.latest = latest
        client.last_push_ms = now
        client.pushes += 1
        client.terminated = terminating
        return ErrorCode.NONE

    # --- matching -------------------------------------------------------------------------------

    def _subscribe(self, client: ClientTelemetry) -> None:
        metrics: list[str] = []
        interval = None
        for name, values in sorted(self.subscriptions.items()):
            if not self._matches(client, _parse_list(values.get("match", ""))):
                continue
            for metric in _parse_list(values.get("metrics", "")):
                if metric not in metrics:
                    metrics.append(metric)
            this = int(values.get("interval.ms", DEFAULT_INTERVAL_MS))
            interval = this if interval is None else min(interval, this)
        if "*" in metrics:
            metrics = ["*"]
        client.metrics = metrics
        client.interval_ms = interval if interval is not None else DEFAULT_INTERVAL_MS
        client.subscription_id = _subscription_id(client)

    @staticmethod
    def _matches(client: ClientTelemetry, patterns: list[str]) -> bool:
        values = {"client_instance_id": str(client.instance_id), "client_id": client.client_id or "",
                  "client_software_name": client.software_name or "", "client_software_version": client.software_version or "",
                  "client_source_address": client.source_address, "client_source_port": client.source_port}
        for pair in patterns:
            key, _, pattern = pair.partition("=")
            if not re.fullmatch(pattern, values[key.strip()]):
                return False
        return True


def _subscription_id(client: ClientTelemetry) -> int:
    text = ",".join(client.metrics) + f"|{client.interval_ms}|{client.instance_id}"
    value = rec.crc32c(text.encode())
    return value - (1 << 32) if value >= 1 << 31 else value


def decode_metrics(data: bytes) -> list[dict]:
    """The data points of OTLP MetricsData: name, value (gauge and sum points; a histogram's
    count and sum), attributes. ValueError for bytes that are not MetricsData."""
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.metrics.v1 import metrics_pb2

    parsed = metrics_pb2.MetricsData()
    try:
        parsed.ParseFromString(data)
    except DecodeError as exc:
        raise ValueError(f"not OTLP MetricsData: {exc}") from None
    points = []
    for resource in parsed.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                kind = metric.WhichOneof("data")
                if kind in ("gauge", "sum"):
                    for p in getattr(metric, kind).data_points:
                        value = p.as_double if p.WhichOneof("value") == "as_double" else p.as_int
                        points.append({"name": metric.name, "value": value, "attributes": _attributes(p.attributes)})
                elif kind == "histogram":
                    for p in metric.histogram.data_points:
                        points.append({"name": metric.name + ".count", "value": p.count, "attributes": _attributes(p.attributes)})
                        points.append({"name": metric.name + ".sum", "value": p.sum, "attributes": _attributes(p.attributes)})
    return points


def _attributes(attributes) -> dict[str, str]:
    out = {}
    for a in attributes:
        kind = a.value.WhichOneof("value")
        out[a.key] = str(getattr(a.value, kind)) if kind else ""
    return out
