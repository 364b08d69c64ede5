"""The one blocking raw-socket Kafka client of trafka's tests and benchmarks, built on
trafka.wire: for tests that must control the exact bytes on the wire (replaying a Produce
request, malformed frames, unserved versions) or see batch headers no client shows."""

from __future__ import annotations

import socket
import struct

from trafka.wire import framing, records
from trafka.wire.messages import APIS

TIMEOUT_S = 10


class RawClient:
    def __init__(self, bootstrap: str, client_id: str = "compat-raw"):
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=TIMEOUT_S)
        self.client_id = client_id
        self.correlation_id = 0

    def frame(self, api_key: int, version: int, body: dict) -> bytes:
        self.correlation_id += 1
        return framing.encode_request(APIS[api_key], version, self.correlation_id, self.client_id, body)

    def send_frame(self, api_key: int, version: int, frame: bytes):
        """Send a frame made by frame() (possibly again) and return the decoded response body."""
        self.sock.sendall(frame)
        size = struct.unpack(">i", self._read(4))[0]
        _, body = framing.decode_response(APIS[api_key], version, self._read(size))
        return body

    def request(self, api_key: int, version: int, body: dict):
        return self.send_frame(api_key, version, self.frame(api_key, version, body))

    def _read(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            buf += chunk
        return bytes(buf)

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
        """Headers of the stored batches from `offset`, as a Fetch v4 returns them."""
        body = self.request(1, 4, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 50 << 20,
                                   "isolation_level": 0,
                                   "topics": [{"topic": topic, "partitions": [{"partition": partition, "fetch_offset": offset,
                                                                               "partition_max_bytes": 50 << 20}]}]})
        part = body.responses[0].partitions[0]
        assert part.error_code == 0, part
        return [header for _, header in records.iter_batches(part.records or b"")]
