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


def _dump_log(args) -> int:
    from trafka.storage.inspect import dump

    status = 0
    for path in args.files:
        try:
            for line in dump(Path(path), args.print_data_log):
                print(line)
        except (OSError, ValueError) as exc:
            print(f"trafka: {exc}", file=sys.stderr)
            status = 1
    return status


def _describe(args) -> int:
    from trafka.storage.inspect import describe_data_dir

    data_dir = Path(args.data_dir)
    if not (data_dir / "topics").is_dir():
        print(f"trafka: {data_dir} is not a trafka data directory (no topics/)", file=sys.stderr)
        return 1
    rows = [("TOPIC", "PARTITION", "LOG-START-OFFSET", "LOG-END-OFFSET", "SEGMENTS", "BYTES")]
    for s in describe_data_dir(data_dir):
        if args.topic and s.topic not in args.topic:
            continue
        rows.append((s.topic, str(s.partition), str(s.log_start_offset), str(s.log_end_offset), str(s.segments), str(s.size)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
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

    dump_p = sub.add_parser("dump-log", help="print the batches of .log files, or the entries of .index/.timeindex files")
    dump_p.add_argument("files", nargs="+", metavar="PATH", help="segment files (.log, .index, .timeindex)")
    dump_p.add_argument("--print-data-log", action="store_true", help="also print every record of a .log file")
    dump_p.set_defaults(run=_dump_log, log_level="WARNING")

    describe_p = sub.add_parser("describe", help="per partition: log start/end offsets, segments, bytes (read-only)")
    describe_p.add_argument("--data-dir", default="./data", help="the broker's data directory (default ./data)")
    describe_p.add_argument("--topic", action="append", default=[], help="only this topic (repeatable)")
    describe_p.set_defaults(run=_describe, log_level="WARNING")

    args = parser.parse_args(argv)
    logging.basicConfig(
        level=getattr(args, "log_level", "INFO").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    return args.run(args)
