"""`trafka healthcheck` / `python -m trafka.healthcheck`: ask a broker for its ApiVersions.

Exit 0 when the broker answers a real ApiVersions v0 request with error code 0, 1 otherwise.
Used by the container image's HEALTHCHECK; works against any Kafka-compatible broker.
"""

from __future__ import annotations

import argparse
import sys

from trafka.testing.rawwire import RawClient

_VERSION = 0  # every broker answers v0, and its response header is v0


def api_versions(host: str, port: int, timeout: float = 5.0) -> list[tuple[int, int, int]]:
    """The (api_key, min_version, max_version) a broker serves; raises on any failure."""
    with RawClient(f"{host}:{port}", "trafka-healthcheck", timeout=timeout) as client:
        body = client.request(18, _VERSION, {})
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
