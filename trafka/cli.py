"""`trafka serve`, and the inspection commands."""

from __future__ import annotations

import argparse
import gc
import logging
import signal
import sys
from functools import partial
from pathlib import Path

log = logging.getLogger("trafka")


def _serve(args) -> int:
    import trio

    from trafka.broker.config import BrokerConfig, ConfigError
    from trafka.broker.cluster.nodes import open_broker
    from trafka.broker.server import ListenError, serve
    from trafka.console.server import console_service, schema_registry_service
    from trafka.restproxy.service import rest_proxy_service
    from trafka.storage.errors import StorageError

    try:
        config = BrokerConfig.from_sources(args.config, args.config_file)
    except ConfigError as exc:
        print(f"trafka: {exc}", file=sys.stderr)
        return 2
    if ignored := config.without_effect():
        log.warning("accepted but without effect in trafka (see docs/configuration.md): %s", ", ".join(ignored))
    if args.data_dir is None:  # Kafka's log.dirs names the data dir when --data-dir does not
        dirs = [d.strip() for d in (config["log.dirs"] or "./data").split(",") if d.strip()]
        if len(dirs) != 1:
            print(f"trafka: log.dirs names {len(dirs)} directories; trafka keeps its data in one", file=sys.stderr)
            return 2
        args.data_dir = dirs[0]
    try:
        broker = open_broker(Path(args.data_dir), config)
    except (StorageError, ValueError) as exc:  # ValueError: an unreadable security file, a bad setting
        print(f"trafka: {exc}", file=sys.stderr)
        return 1

    # Everything loaded so far (modules, compiled structs, recovered logs) lives as long as the
    # broker: keep it out of the cyclic GC, whose full passes over it took ~20 ms each and
    # showed up as produce and fetch latency spikes.
    gc.freeze()
    gc.enable()

    async def main():
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                port = await nursery.start(partial(serve, broker, args.host, args.port,
                                                   services=[console_service, schema_registry_service, rest_proxy_service]))
                console = f"; console at {broker.console_url}" if broker.console_url else ""
                if broker.schema_registry_url:
                    console += f"; schema registry at {broker.schema_registry_url}"
                if broker.rest_proxy_url:
                    console += f"; REST proxy at {broker.rest_proxy_url}"
                print(f"trafka listening on {broker.host}:{port} (data in {args.data_dir})"
                      f"{_listener_summary(broker)}{console}", flush=True)
                async for signum in signals:
                    log.info("got %s, shutting down", signal.Signals(signum).name)
                    break
                # Cancel at once: every storage write runs between awaits, so cancelling cannot
                # tear one; what is in flight is waiting (long-poll Fetch, JoinGroup, SyncGroup),
                # and clients retry those. A cleaner pass in a worker thread is waited for.
                nursery.cancel_scope.cancel()

    status = 0
    try:
        trio.run(main)
    except* (ListenError, ConfigError) as refused:
        first = refused
        while isinstance(first, BaseExceptionGroup):  # nested nurseries nest the groups
            first = first.exceptions[0]
        print(f"trafka: {first}", file=sys.stderr)
        status = 1
    finally:
        broker.cluster.close()
    if status == 0:
        log.info("stopped cleanly")
    return status


def _listener_summary(broker) -> str:
    """`; listeners NAME=HOST:PORT ...` when more than the one PLAINTEXT shorthand listener is open."""
    summary = ""
    if not (len(broker.listeners) == 1 and broker.listeners[0].protocol == "PLAINTEXT"):
        summary = "; listeners " + " ".join(f"{l.name}={l.host}:{l.port}" for l in broker.listeners)
    if len(broker.cluster.nodes) > 1:
        summary += "; simulated cluster: " + ", ".join(
            f"broker {node.node_id} on {node.host}:{node.port}" for node in broker.cluster.nodes)
    return summary


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


def _print_table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


def is_data_dir(data_dir: Path) -> bool:
    from trafka.broker.metadata.offline import is_data_dir as found

    return found(data_dir)


def offline_topics(data_dir: Path) -> list:
    """The data dir's topics from its metadata log (trafka/broker/metadata/offline.py)."""
    from trafka.broker.metadata.offline import offline_topics as read

    return read(data_dir)


def _describe(args) -> int:
    from trafka.storage.inspect import describe_data_dir, last_stable_offset
    from trafka.storage.topic_store import partition_dir

    data_dir = Path(args.data_dir)
    if not is_data_dir(data_dir):
        print(f"trafka: {data_dir} is not a trafka data directory (no metadata log)", file=sys.stderr)
        return 1
    rows = [("TOPIC", "PARTITION", "LOG-START-OFFSET", "LOG-END-OFFSET", "LAST-STABLE-OFFSET", "SEGMENTS", "BYTES")]
    for s in describe_data_dir(data_dir, offline_topics(data_dir)):
        if args.topic and s.topic not in args.topic:
            continue
        lso = last_stable_offset(partition_dir(data_dir, s.topic, s.partition), s.log_end_offset)
        rows.append((s.topic, str(s.partition), str(s.log_start_offset), str(s.log_end_offset), str(lso),
                     str(s.segments), str(s.size)))
    _print_table(rows)
    return 0


def _describe_rows(group, log_end: dict[tuple[str, int], int]):
    """One group's row of the states table, and its rows of the members and offsets tables,
    from the one description of a group (trafka/broker/coordinators/group/describe.py)."""
    from datetime import datetime, timezone

    from trafka.broker.coordinators.group.describe import describe

    d = describe(group, lambda t, p: log_end.get((t, p)))
    since = "-" if d["group_type"] == "consumer" else \
        datetime.fromtimestamp(d["state_since_ms"] / 1000, timezone.utc).isoformat(timespec="seconds")
    state = (d["group_id"], d["state"], d["protocol_type"] or "-", d["protocol"] or "-", str(d["generation"]),
             str(len(d["members"])), since)
    members = []
    for m in d["members"]:
        subscription = "?" if m["subscription"] is None else ",".join(m["subscription"]) or "-"
        assignment = ",".join(f"{a['topic']}-{p}" for a in m["assignment"] for p in a["partitions"]) or "-"
        if m["assignment"] == [] and d["group_type"] == "classic" and d["protocol_type"] != "consumer":
            assignment = "?"
        members.append((d["group_id"], m["member_id"], m["group_instance_id"] or "-", m["client_id"],
                        m["client_host"], subscription, assignment))
    offsets = [(d["group_id"], o["topic"], str(o["partition"]), _dash(o["committed_offset"]), _dash(o["log_end_offset"]),
                _dash(o["lag"]), o["member_id"] or "-") for o in d["offsets"]]
    return state, members, offsets


def _dash(value) -> str:
    return "-" if value is None else str(value)


def _groups(args) -> int:
    """Kafka's `kafka-consumer-groups.sh --describe` with --state, --members and offsets, from the files."""
    from trafka.broker.coordinators.group.formats import parse_key
    from trafka.broker.coordinators.group.offsets_topic import OFFSETS_TOPIC
    from trafka.broker.coordinators.group.shard import load_state
    from trafka.storage.clock import BrokerClock
    from trafka.storage.inspect import describe_data_dir

    data_dir = Path(args.data_dir)
    if not is_data_dir(data_dir):
        print(f"trafka: {data_dir} is not a trafka data directory (no metadata log)", file=sys.stderr)
        return 1
    # Broker time, with any offset a test moved the clock by (kept in the data dir).
    entries = _parsed(data_dir, OFFSETS_TOPIC, lambda key, value: (parse_key(key), value))
    classic, consumer, _ = load_state(entries, BrokerClock(state_dir=data_dir).time_ms(), 0)
    groups = {**classic, **consumer}
    chosen = sorted(g for g in groups if not args.group or g in args.group)
    if args.group and not chosen:
        print(f"trafka: no group {', '.join(args.group)} in {data_dir}", file=sys.stderr)
        return 1
    log_end = {(s.topic, s.partition): s.log_end_offset for s in describe_data_dir(data_dir, offline_topics(data_dir))}
    states = [("GROUP", "STATE", "PROTOCOL-TYPE", "PROTOCOL", "GENERATION", "MEMBERS", "STATE-SINCE")]
    members = [("GROUP", "MEMBER-ID", "GROUP-INSTANCE-ID", "CLIENT-ID", "HOST", "SUBSCRIPTION", "ASSIGNMENT")]
    offsets = [("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "MEMBER-ID")]
    for group_id in chosen:
        state, member_rows, offset_rows = _describe_rows(groups[group_id], log_end)
        states.append(state)
        members.extend(member_rows)
        offsets.extend(offset_rows)
    print("# States and members as of each group's last persisted group metadata (STATE-SINCE).")
    for table in (states, members, offsets):
        print()
        _print_table(table)
    return 0


def _share_groups(args) -> int:
    """Like kafka-share-groups.sh --describe --offsets, from `__share_group_state` on disk: per
    share-partition its start offset, the log end, the records not yet done with (LAG) and the
    in-flight ones by state. Membership is not on disk (docs/share-groups.md)."""
    from trafka.broker.coordinators.share.coordinator import SHARE_STATE_TOPIC, ShareStateShard
    from trafka.broker.coordinators.share.partition import RecordState
    from trafka.storage.inspect import describe_data_dir
    from trafka.storage.errors import StorageError

    data_dir = Path(args.data_dir)
    if not is_data_dir(data_dir):
        print(f"trafka: {data_dir} is not a trafka data directory (no metadata log)", file=sys.stderr)
        return 1
    shard = ShareStateShard()  # replayed as the share coordinator replays it: snapshots, updates laid over them
    for _ in _parsed(data_dir, SHARE_STATE_TOPIC, shard.replay):
        pass
    latest = {key: state for key, (_, state) in shard.written.items()}
    try:
        names = {metadata.topic_id: metadata.name for metadata in offline_topics(data_dir)}
    except StorageError:  # damaged topic metadata: topics show by id
        names = {}
    log_end = {(s.topic, s.partition): s.log_end_offset for s in describe_data_dir(data_dir, offline_topics(data_dir))}
    rows = [("GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LOG-END-OFFSET", "LAG", "ACKNOWLEDGED", "ARCHIVED", "AVAILABLE")]
    chosen = [k for k in latest if not args.group or k.group_id in args.group]
    if args.group and not chosen:
        print(f"trafka: no share group {', '.join(args.group)} in {data_dir}", file=sys.stderr)
        return 1
    for key in sorted(chosen, key=lambda k: (k.group_id, names.get(k.topic_id, str(k.topic_id)), k.partition)):
        start, batches = latest[key]
        topic = names.get(key.topic_id, str(key.topic_id))
        end = log_end.get((topic, key.partition))
        counts = {state: 0 for state in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED, RecordState.AVAILABLE)}
        for first, last, state, _ in batches:
            counts[RecordState(state)] = counts.get(RecordState(state), 0) + last - first + 1
        done = counts[RecordState.ACKNOWLEDGED] + counts[RecordState.ARCHIVED]
        lag = "-" if end is None else str(max(end - start - done, 0))
        rows.append((key.group_id, topic, str(key.partition), str(start), _dash(end), lag,
                     str(counts[RecordState.ACKNOWLEDGED]), str(counts[RecordState.ARCHIVED]),
                     str(counts[RecordState.AVAILABLE])))
    print("# Share-partitions as their last state record in __share_group_state left them"
          " (records acquired but not acknowledged count as AVAILABLE).")
    _print_table(rows)
    return 0


def _parsed(data_dir: Path, topic: str, parse):
    """`parse(key, value)` of each committed record of an internal topic on disk; a record this
    version cannot read is skipped with a line on stderr."""
    from trafka.broker.coordinators.runtime.offline import read_topic
    from trafka.broker.coordinators.runtime.records import UnknownRecord

    for record in read_topic(data_dir, topic):
        try:
            yield parse(record.key, record.value)
        except UnknownRecord as exc:
            print(f"trafka: {topic} offset {record.offset}: skipping a record: {exc}", file=sys.stderr)


def _transactions(args) -> int:
    """Like kafka-transactions.sh list/describe, from `__transaction_state` on disk."""
    from trafka.broker.coordinators.transaction.formats import parse_txn_key, parse_txn_value
    from trafka.broker.coordinators.transaction.state_topic import TRANSACTION_STATE_TOPIC

    data_dir = Path(args.data_dir)
    if not is_data_dir(data_dir):
        print(f"trafka: {data_dir} is not a trafka data directory (no metadata log)", file=sys.stderr)
        return 1
    latest = {}
    entries = _parsed(data_dir, TRANSACTION_STATE_TOPIC,
                      lambda key, value: (parse_txn_key(key), None if value is None else parse_txn_value(value)))
    for transactional_id, record in entries:
        if record is None:
            latest.pop(transactional_id, None)
        else:
            latest[transactional_id] = record
    rows = [("TRANSACTIONAL-ID", "STATE", "PRODUCER-ID", "EPOCH", "TIMEOUT-MS", "START-TIME-MS", "PARTITIONS")]
    for transactional_id, record in sorted(latest.items()):
        if args.transactional_id and transactional_id not in args.transactional_id:
            continue
        partitions = ",".join(f"{t}-{p}" for t, p in record.partitions) or "-"
        rows.append((transactional_id, record.state.kafka_name, str(record.producer_id), str(record.producer_epoch),
                     str(record.timeout_ms), str(record.start_ms), partitions))
    _print_table(rows)
    return 0


def _read_only_commands():
    from trafka import metadata_command

    return {_dump_log, _describe, _groups, _transactions, _share_groups, metadata_command.run}


def main(argv: list[str] | None = None) -> int:
    # No cyclic GC while `serve` imports its modules and opens the broker: its passes over the
    # objects being made find no garbage there and cost ~5% of the start. `serve` freezes what
    # it made and turns the GC back on; every other command has it on once its arguments are read.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    parser = argparse.ArgumentParser(prog="trafka", description="A Kafka-compatible broker for development and CI.")
    sub = parser.add_subparsers(dest="command", required=True)

    serve_p = sub.add_parser("serve", help="run the broker")
    serve_p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve_p.add_argument("--port", type=int, default=9092, help="port to bind; 0 picks a free one (default 9092)")
    serve_p.add_argument("--data-dir", default=None, help="where the logs live (default: log.dirs, else ./data)")
    serve_p.add_argument("--config", action="append", default=[], metavar="NAME=VALUE", help="a broker setting by Kafka's name (repeatable)")
    serve_p.add_argument("--config-file", action="append", default=[], type=Path, metavar="FILE", help="a Kafka-style properties file")
    serve_p.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    serve_p.set_defaults(run=_serve)

    from trafka import healthcheck

    health_p = sub.add_parser("healthcheck", help="exit 0 if a broker answers ApiVersions")
    healthcheck.add_arguments(health_p)
    health_p.set_defaults(run=healthcheck.run)

    from trafka import nemesis_command

    nemesis_p = sub.add_parser("nemesis", help="run a seeded fault schedule on a running broker (docs/nemesis.md)")
    nemesis_command.add_arguments(nemesis_p)
    nemesis_p.set_defaults(run=nemesis_command.run, log_level="WARNING")

    from trafka import metadata_command

    metadata_p = sub.add_parser("metadata", help="print the cluster metadata image (features, quotas, configs, ACLs, "
                                "SCRAM users, producer ids, partitions) from the metadata log on disk")
    metadata_command.add_arguments(metadata_p)
    metadata_p.set_defaults(run=metadata_command.run)

    dump_p = sub.add_parser("dump-log", help="print the batches of .log files (transaction markers included), or the entries of .index/.timeindex/.txnindex files")
    dump_p.add_argument("files", nargs="+", metavar="PATH", help="segment files (.log, .index, .timeindex, .txnindex)")
    dump_p.add_argument("--print-data-log", action="store_true", help="also print every record of a .log file")
    dump_p.set_defaults(run=_dump_log, log_level="WARNING")

    describe_p = sub.add_parser("describe", help="per partition: log start/end offsets, last stable offset, segments, bytes (read-only)")
    describe_p.add_argument("--data-dir", default="./data", help="the broker's data directory (default ./data)")
    describe_p.add_argument("--topic", action="append", default=[], help="only this topic (repeatable)")
    describe_p.set_defaults(run=_describe, log_level="WARNING")

    groups_p = sub.add_parser("groups", help="per group: state, members, assignments, committed offsets and lag (read-only)")
    groups_p.add_argument("--data-dir", default="./data", help="the broker's data directory (default ./data)")
    groups_p.add_argument("--group", action="append", default=[], help="only this group (repeatable)")
    groups_p.set_defaults(run=_groups, log_level="WARNING")

    share_p = sub.add_parser("share-groups", help="per share-partition: start offset, log end, lag, records by state (read-only)")
    share_p.add_argument("--data-dir", default="./data", help="the broker's data directory (default ./data)")
    share_p.add_argument("--group", action="append", default=[], help="only this share group (repeatable)")
    share_p.set_defaults(run=_share_groups, log_level="WARNING")

    txn_p = sub.add_parser("transactions", help="per transactional id: state, producer id and epoch, timeout, partitions (read-only)")
    txn_p.add_argument("--data-dir", default="./data", help="the broker's data directory (default ./data)")
    txn_p.add_argument("--transactional-id", action="append", default=[], help="only this id (repeatable)")
    txn_p.set_defaults(run=_transactions, log_level="WARNING")

    try:
        args = parser.parse_args(argv)
        if args.run is not _serve and gc_was_enabled:
            gc.enable()
        return _run(args)
    finally:
        if gc_was_enabled:
            gc.enable()


def _run(args) -> int:
    logging.basicConfig(
        level=getattr(args, "log_level", "INFO").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if args.run in _read_only_commands():
        _die_quietly_on_closed_pipe()
    return args.run(args)


def _die_quietly_on_closed_pipe() -> None:
    """`trafka dump-log ... | head` ends as Unix tools do: when the reader goes away, the
    process ends by SIGPIPE, silently (Python ignores SIGPIPE and raises BrokenPipeError
    instead, which printed "trafka: [Errno 32] Broken pipe"). Only for the inspection commands,
    never for `serve`, whose sockets must see EPIPE as an error instead."""
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
