"""`trafka serve`, and the inspection commands."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path

import trio

log = logging.getLogger("trafka")

SHUTDOWN_GRACE_SECONDS = 5


def _serve(args) -> int:
    from trafka.broker.config import BrokerConfig, ConfigError
    from trafka.broker.server import Broker, serve
    from trafka.storage.errors import StorageError

    try:
        config = BrokerConfig.from_sources(args.config, args.config_file)
    except ConfigError as exc:
        print(f"trafka: {exc}", file=sys.stderr)
        return 2
    try:
        broker = Broker(Path(args.data_dir), config)
    except StorageError as exc:
        print(f"trafka: {exc}", file=sys.stderr)
        return 1

    async def main():
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                port = await nursery.start(serve, broker, args.host, args.port)
                print(f"trafka listening on {args.host}:{port} (data in {args.data_dir})", flush=True)
                async for signum in signals:
                    log.info("got %s, shutting down", signal.Signals(signum).name)
                    break
                nursery.cancel_scope.deadline = trio.current_time() + SHUTDOWN_GRACE_SECONDS
                nursery.cancel_scope.cancel()

    try:
        trio.run(main)
    finally:
        broker.close()
        log.info("stopped cleanly")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="trafka", description="A Kafka-compatible broker for development and CI.")
    sub = parser.add_subparsers(dest="command", required=True)

    serve_p = sub.add_parser("serve", help="run the broker")
    serve_p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve_p.add_argument("--port", type=int, default=9092, help="port to bind; 0 picks a free one (default 9092)")
    serve_p.add_argument("--data-dir", default="./data", help="where the logs live (default ./data)")
    serve_p.add_argument("--config", action="append", default=[], metavar="NAME=VALUE", help="a broker setting by Kafka's name (repeatable)")
    serve_p.add_argument("--config-file", action="append", default=[], type=Path, metavar="FILE", help="a Kafka-style properties file")
    serve_p.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    serve_p.set_defaults(run=_serve)

    from trafka import healthcheck

    health_p = sub.add_parser("healthcheck", help="exit 0 if a broker answers ApiVersions")
    healthcheck.add_arguments(health_p)
    health_p.set_defaults(run=healthcheck.run)

    args = parser.parse_args(argv)
    logging.basicConfig(
        level=getattr(args, "log_level", "INFO").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    return args.run(args)
