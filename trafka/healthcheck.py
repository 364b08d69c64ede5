"""`trafka healthcheck` / `python -m trafka.healthcheck`: ask a broker for its ApiVersions.

Exit 0 when the broker answers a real ApiVersions v0 request with error code 0, 1 otherwise.
Used by the container image's HEALTHCHECK; works against any Kafka-compatible broker.
"""

from __future__ import annotations

import argparse
import socket
import sys

from trafka.wire.framing import SIZE, decode_response, encode_request
from trafka.wire.messages.api_versions import API

_VERSION = 0  # every broker answers v0, and its response header is v0


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        buf += chunk
    return bytes(buf)


def api_versions(host: str, port: int, timeout: float = 5.0) -> list[tuple[int, int, int]]:
    """The (api_key, min_version, max_version) a broker serves; raises on any failure."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(encode_request(API, _VERSION, 1, "trafka-healthcheck", {}))
        (size,) = SIZE.unpack(_read_exactly(sock, SIZE.size))
        correlation_id, body = decode_response(API, _VERSION, _read_exactly(sock, size))
    if correlation_id != 1:
        raise ValueError(f"answer has correlation id {correlation_id}, expected 1")
    if body.error_code != 0:
        raise ValueError(f"ApiVersions answered error code {body.error_code}")
    return [(k.api_key, k.min_version, k.max_version) for k in body.api_keys]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="broker host (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=9092, help="broker port (default 9092)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds before giving up (default 5)")


def run(args) -> int:
    try:
        keys = api_versions(args.host, args.port, args.timeout)
    except Exception as exc:  # noqa: BLE001 - any failure is "unhealthy"
        print(f"unhealthy: {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    print(f"healthy: {args.host}:{args.port} serves {len(keys)} APIs")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="trafka healthcheck", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
