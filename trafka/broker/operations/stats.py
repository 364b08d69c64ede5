"""What the broker counts for the console and /metrics: requests per API (count, errors-free
latency), bytes in and out per topic, and the open connections with the client id and the
software name/version each client reported in ApiVersions.

Plain counters, no exporter library: the broker only counts (one `observe` per request, called
from connection.dispatch); the HTTP side (trafka.console.metrics) turns them into Prometheus
text. Latency buckets follow prometheus_client's defaults so its histograms line up.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field

from trafka.wire.text import printable

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
_PRODUCE, _FETCH, _API_VERSIONS = 0, 1, 18


@dataclass
class ApiStats:
    count: int = 0
    seconds: float = 0.0
    buckets: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS) + 1))


@dataclass
class ConnectionInfo:
    peer: str
    opened_ms: int
    client_id: str | None = None
    software_name: str | None = None
    software_version: str | None = None
    requests: int = 0
    last_api: str | None = None
    client_instance_id: object = None  # the KIP-714 instance id GetTelemetrySubscriptions gave it


class BrokerStats:
    def __init__(self):
        self.apis: dict[str, ApiStats] = {}
        self.bytes_in: dict[str, int] = {}  # topic -> record bytes produced
        self.bytes_out: dict[str, int] = {}  # topic -> record bytes fetched
        self.connections: dict[str, ConnectionInfo] = {}
        self.started = time.time()

    def opened(self, peer: str) -> None:
        self.connections[peer] = ConnectionInfo(peer, int(time.time() * 1000))

    def closed(self, peer: str) -> None:
        self.connections.pop(peer, None)

    def observe(self, api_name: str, header, body, result, peer: str, seconds: float) -> None:
        """One answered request (called from connection.dispatch)."""
        stats = self.apis.get(api_name)
        if stats is None:
            stats = self.apis[api_name] = ApiStats()
        stats.count += 1
        stats.seconds += seconds
        stats.buckets[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
        conn = self.connections.get(peer)
        if conn is not None:
            conn.requests += 1
            conn.last_api = api_name
            if header.client_id is not None:
                conn.client_id = printable(header.client_id)
        key = header.api_key
        if key == _PRODUCE:
            for topic in body.topic_data:
                size = sum(len(p.records or b"") for p in topic.partition_data)
                self.bytes_in[topic.name] = self.bytes_in.get(topic.name, 0) + size
        elif key == _FETCH and isinstance(result, dict):
            for topic in result.get("responses", ()):
                name = topic.get("topic")
                if not name:
                    continue
                size = sum(_size(p.get("records")) for p in topic.get("partitions", ()))
                self.bytes_out[name] = self.bytes_out.get(name, 0) + size
        elif key == _API_VERSIONS and conn is not None and header.api_version >= 3:
            conn.software_name = printable(body.client_software_name)
            conn.software_version = printable(body.client_software_version)


def _size(records) -> int:
    """Bytes of a Fetch partition's records: bytes, or a list of bytes and file slices."""
    if not records:
        return 0
    if isinstance(records, list):
        return sum(len(piece) for piece in records)
    return len(records)
