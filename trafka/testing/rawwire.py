"""The one blocking raw-socket Kafka client of trafka, built on trafka.wire: for tests that must
control the exact bytes on the wire (replaying a Produce request, malformed frames, unserved
versions) or see batch headers no client shows, for the benchmarks' request loops, and behind
`trafka healthcheck` (which is why it needs nothing but the standard library and trafka.wire)."""

from __future__ import annotations

import socket

from trafka.wire import framing, records
from trafka.wire.messages import APIS

TIMEOUT_S = 10


class RawClient:
    """One connection; `request` sends a request and returns the decoded answer, the lower calls
    (`frame`, `send`, `read_frame`, `receive`) let a test send anything and read what comes back."""

    def __init__(self, bootstrap: str, client_id: str = "trafka-raw", timeout: float = TIMEOUT_S):
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.client_id = client_id
        self.correlation_id = 0

    def frame(self, api_key: int, version: int, body: dict) -> bytes:
        """A whole request frame with the next correlation id."""
        self.correlation_id += 1
        return framing.encode_request(APIS[api_key], version, self.correlation_id, self.client_id, body)

    def send(self, data: bytes) -> None:
        """Any bytes: frames made by frame(), several at once, or a malformed one."""
        self.sock.sendall(data)

    def read_exactly(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            buf += chunk
        return bytes(buf)

    def read_frame(self) -> bytes:
        """The next response frame, without its size prefix."""
        (size,) = framing.SIZE.unpack(self.read_exactly(framing.SIZE.size))
        return self.read_exactly(size)

    def receive(self, api_key: int, version: int) -> tuple[int, object]:
        """(correlation id, decoded body) of the next response frame."""
        return framing.decode_response(APIS[api_key], version, self.read_frame())

    def send_frame(self, api_key: int, version: int, frame: bytes):
        """Send a frame made by frame() (possibly again) and return the decoded response body."""
        expected = int.from_bytes(frame[8:12], "big")  # after the size, api key and version
        self.send(frame)
        correlation_id, body = self.receive(api_key, version)
        if correlation_id != expected:
            raise ValueError(f"answer has correlation id {correlation_id}, expected {expected}")
        return body

    def request(self, api_key: int, version: int, body: dict):
        return self.send_frame(api_key, version, self.frame(api_key, version, body))

    def closed_by_broker(self, timeout: float = 5) -> bool:
        """Whether the broker closes the connection (EOF or reset) within `timeout` seconds,
        reading nothing else first."""
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- the few requests the tests need -------------------------------------------------

    def init_producer_id(self) -> tuple[int, int]:
        body = self.request(22, 1, {"transactional_id": None, "transaction_timeout_ms": 60000})
        assert body.error_code == 0, body
        return body.producer_id, body.producer_epoch

    def produce_frame(self, topic: str, partition: int, batch: bytes, version: int = 7) -> bytes:
        return self.frame(0, version, {"transactional_id": None, "acks": -1, "timeout_ms": 10000,
                                       "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": batch}]}]})

    def fetch_batches(self, topic: str, partition: int = 0, offset: int = 0) -> list[records.BatchHeader]:
        """Headers of the stored batches from `offset` to the high watermark, as Fetch v4 returns
        them, one request after another (each answer ends where its limit cuts it, its last
        batch short)."""
        headers: list[records.BatchHeader] = []
        while True:
            body = self.request(1, 4, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 50 << 20,
                                       "isolation_level": 0,
                                       "topics": [{"topic": topic, "partitions": [{"partition": partition, "fetch_offset": offset,
                                                                                   "partition_max_bytes": 50 << 20}]}]})
            part = body.responses[0].partitions[0]
            assert part.error_code == 0, part
            before = len(headers)
            headers.extend(header for _, header in records.fetched_batches(part.records or b""))
            if len(headers) == before:
                return headers
            offset = headers[-1].base_offset + headers[-1].last_offset_delta + 1
            if offset >= part.high_watermark:
                return headers
