"""Broker state as JSON-able dicts: what the pages draw and /api/v1/ returns.

Everything here reads the objects the handlers use (broker.logs, broker.group_coordinator,
broker.stats) on the broker's trio thread, between two requests, so what it sees is
consistent. Reads of record data are bounded (`MAX_RECORDS`, `MAX_READ_BYTES`) so no page
holds the event loop for long.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone

from trafka.broker.testcontrol.nemesis import runner as nemesis_runner
from trafka.storage.errors import OffsetOutOfRange, UnknownTopic
from trafka.storage.retention import segment_largest_timestamp
from trafka.wire import records as rec

MAX_RECORDS = 500  # one page of the record browser
MAX_READ_BYTES = 4 << 20  # bytes read from a log for one page
TAIL_CELLS = 48  # records drawn as cells at the head of the partition diagram


def clustered(broker) -> bool:
    """Whether the console shows a simulated cluster's views (brokers, replicas): more than one."""
    return len(broker.cluster.nodes) > 1


def serving(broker):
    """The broker whose metadata the console reads: this one, or the cluster's first running
    node (broker 0 of a simulated cluster may be stopped; the console outlives it)."""
    if broker.node_id not in broker.cluster.stopped:
        return broker
    running = broker.cluster.running_nodes()
    return running[0] if running else broker


def partition_log(broker, topic: str, partition: int):
    """The log, or LookupError (-> 404) naming what is missing: the leader's replica (an offline
    partition: its first replica on a running broker)."""
    broker = serving(broker)
    if topic not in broker.logs.topics:
        raise LookupError(f"unknown topic {topic!r}")
    try:
        return _holder(broker, topic, partition).logs.log(topic, partition)
    except UnknownTopic:
        raise LookupError(f"topic {topic!r} has no partition {partition}") from None


def _holder(broker, topic: str, partition: int):
    cluster = broker.cluster
    leader = cluster.leader_node(topic, partition)
    if leader is not None:
        return leader
    metadata = broker.logs.topics[topic]
    running = {node.node_id: node for node in cluster.running_nodes()}
    for replica in cluster.controller.replicas(metadata.topic_id, partition) if 0 <= partition < metadata.partitions else ():
        if replica in running:
            return running[replica]
    raise LookupError(f"no running broker holds {topic}-{partition}")


def partition_logs(broker):
    """(topic, partition, log) of every partition, each from its leader."""
    broker = serving(broker)
    for name, metadata in list(broker.logs.topics.items()):
        for p in range(metadata.partitions):
            try:
                yield name, p, _holder(broker, name, p).logs.log(name, p)
            except LookupError:
                continue  # offline, and no running broker has a copy


def coordinators(broker) -> list:
    """The group coordinators holding groups: every running broker's."""
    return [node.group_coordinator for node in broker.cluster.running_nodes()]


def all_groups(broker) -> dict:
    """Every group by id: classic groups and KIP-848 consumer groups (an id is one or the other)."""
    groups = {}
    for coordinator in coordinators(broker):
        groups.update(coordinator.all_groups())
    return groups


def group_coordinator(broker, group_id: str):
    """The coordinator holding the group (this broker's when none does)."""
    for coordinator in coordinators(broker):
        if group_id in coordinator.all_groups():
            return coordinator
    return broker.group_coordinator


def brokers(broker) -> list[dict]:
    """What the overview lists: a simulated cluster's brokers (broker_rows); none for a broker
    on its own."""
    return broker_rows(broker) if clustered(broker) else []


def broker_rows(broker) -> list[dict]:
    """The cluster's brokers: up or down, their rack, how many partitions each leads and holds,
    and how many it leads are under-replicated (ISR smaller than the replicas)."""
    cluster = broker.cluster
    controller = cluster.controller
    rows = {n.node_id: {"node_id": n.node_id, "alive": n.node_id in controller.alive, "rack": controller.racks[n.node_id],
                        "leaders": 0, "replicas": 0, "under_replicated": 0, "address": f"{n.host}:{n.port}"}
            for n in cluster.nodes}
    for metadata in serving(broker).logs.topics.values():
        for p in range(metadata.partitions):
            state = controller.partition(metadata.topic_id, p)
            for replica in state.replicas:
                rows[replica]["replicas"] += 1
            if state.leader >= 0:
                rows[state.leader]["leaders"] += 1
                if len(state.isr) < len(state.replicas):
                    rows[state.leader]["under_replicated"] += 1
    return list(rows.values())


def replication_state(broker, topic: str, index: int) -> dict:
    """leader, replicas, ISR and offline replicas of a partition, the controller's."""
    controller = broker.cluster.controller
    state = controller.partition(broker.logs.topics[topic].topic_id, index)
    return {"leader": state.leader, "leader_epoch": state.leader_epoch, "replicas": list(state.replicas),
            "isr": list(state.isr), "offline_replicas": [r for r in state.replicas if r not in controller.alive]}


def committed_offsets(broker) -> dict[tuple[str, int], list[tuple[str, int]]]:
    """(topic, partition) -> [(group id, committed offset)]."""
    found: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for group_id, group in all_groups(broker).items():
        for key, committed in group.offsets.items():
            found.setdefault(key, []).append((group_id, committed.offset))
    return found


def _segment(segment, active: bool) -> dict:
    return {
        "base_offset": segment.base_offset,
        "next_offset": segment.next_offset,
        "size": segment.size,
        "largest_timestamp": segment_largest_timestamp(segment) if segment.size else None,
        "created_ms": segment.created_ms,
        "active": active,
    }


def retention(broker, log) -> dict:
    """The retention boundary: settings and when the oldest segment goes, by time and by size."""
    config = log.config
    now = broker.clock.time_ms()
    oldest = log.segments[0]
    view = {
        "cleanup_policy": ",".join(sorted(config.cleanup_policy)),
        "retention_ms": config.retention_ms,
        "retention_bytes": config.retention_bytes,
        "segment_bytes": config.segment_bytes,
        "segment_ms": config.segment_ms,
        "check_interval_ms": broker.config["log.retention.check.interval.ms"],
        "now_ms": now,
        "oldest_segment": oldest.base_offset,
        "oldest_goes_by_time_at_ms": None,
        "oldest_goes_by_size_after_bytes": None,
    }
    if not config.delete or oldest.size == 0:
        return view
    if config.retention_ms >= 0:
        # Deleted by the first retention check after its newest record is retention.ms old.
        view["oldest_goes_by_time_at_ms"] = segment_largest_timestamp(oldest) + config.retention_ms + 1
    if config.retention_bytes >= 0:
        excess = log.size_in_bytes - config.retention_bytes
        view["oldest_goes_by_size_after_bytes"] = max(oldest.size - excess, 0)
    return view


def partition(broker, topic: str, index: int, *, groups=None, tail: bool = False) -> dict:
    broker = serving(broker)
    try:
        log = partition_log(broker, topic, index)
    except LookupError:
        metadata = broker.logs.topics.get(topic)
        if metadata is None or not 0 <= index < metadata.partitions:
            raise
        # Offline with no running replica: nothing to read, only where it lives.
        return {"partition": index, "clustered": True, **replication_state(broker, topic, index), "log_start_offset": 0,
                "last_stable_offset": 0, "high_watermark": 0, "log_end_offset": 0, "size": 0, "segments": [],
                "groups": []}
    segments = log.segments
    hw = log.high_watermark
    if groups is None:
        groups = committed_offsets(broker)
    view = {
        "partition": index,
        "clustered": clustered(broker),
        **replication_state(broker, topic, index),
        "log_start_offset": log.log_start_offset,
        "last_stable_offset": log.last_stable_offset,
        "high_watermark": hw,
        "log_end_offset": log.log_end_offset,
        "size": log.size_in_bytes,
        "segments": [_segment(s, i == len(segments) - 1) for i, s in enumerate(segments)],
        "groups": [
            {"group_id": g, "committed_offset": offset, "lag": max(hw - offset, 0)}
            for g, offset in sorted(groups.get((topic, index), ()))
        ],
    }
    if tail:
        view["topic"] = topic
        view["retention"] = retention(broker, log)
        view["tail"] = tail_cells(log)
    return view


def tail_cells(log) -> dict:
    """The newest records as cells: present offsets, tombstones, and the gaps compaction left."""
    end = log.log_end_offset
    start = max(log.log_start_offset, end - TAIL_CELLS)
    found = read_records(log, start, TAIL_CELLS) if start < end else []
    return {
        "from": start,
        "to": end,
        "records": [{"offset": r.offset, "tombstone": r.value is None, "key": _short(r.key)} for r in found],
    }


def _short(data: bytes | None) -> str | None:
    if data is None:
        return None
    text = data[:24].decode("utf-8", "replace")
    return text + ("…" if len(data) > 24 else "")


def read_records(log, offset: int, limit: int, max_offset: int | None = None) -> list[rec.Record]:
    """Up to `limit` records from `offset` (whole batches, at most MAX_READ_BYTES read)."""
    offset = max(offset, log.log_start_offset)
    found: list[rec.Record] = []
    while len(found) < limit and offset < log.high_watermark:
        try:
            read = log.read(offset, MAX_READ_BYTES, min_one_batch=True)
        except OffsetOutOfRange:
            break
        data = read.to_bytes()
        if not data:
            break
        last = offset
        for pos, header in rec.iter_batches(data, validate=False):
            if rec.is_control(header.attributes):
                last = header.last_offset + 1
                continue
            for record in rec.decode_records(data, pos):
                if record.offset >= offset and len(found) < limit:
                    found.append(record)
            last = header.last_offset + 1
        if last <= offset:
            break
        offset = last
        if read.size >= MAX_READ_BYTES:
            break
    return found


def topic(broker, name: str, groups=None) -> dict:
    broker = serving(broker)
    meta = broker.logs.topics[name]
    config = broker.logs.log_config(name)
    if groups is None:
        groups = committed_offsets(broker)
    partitions = [partition(broker, name, p, groups=groups) for p in range(meta.partitions)]
    return {
        "name": name,
        "topic_id": str(meta.topic_id),
        "internal": _internal(name),
        "cleanup_policy": ",".join(sorted(config.cleanup_policy)),
        "retention_ms": config.retention_ms,
        "retention_bytes": config.retention_bytes,
        "segment_bytes": config.segment_bytes,
        "configs": dict(meta.configs),
        "size": sum(p["size"] for p in partitions),
        "partitions": partitions,
    }


def _internal(name: str) -> bool:
    """Kafka's internal topics and the schema registry's `_schemas`."""
    return name.startswith("__") or name == "_schemas"


def group(broker, group_id: str, log_end: dict | None = None) -> dict:
    """The one description of a group (trafka/broker/coordinators/group/describe.py)."""
    coordinator = group_coordinator(broker, group_id)
    if log_end is None:
        return coordinator.describe_group(group_id, lambda t, p: _high_watermark(broker, t, p))
    return coordinator.describe_group(group_id, lambda t, p: log_end.get((t, p)))


def _high_watermark(broker, topic: str, index: int) -> int | None:
    try:
        return partition_log(broker, topic, index).high_watermark
    except LookupError:
        return None


def cluster(broker) -> dict:
    nemesis = nemesis_runner.report(broker)  # kept on the broker the control endpoint was given
    broker = serving(broker)
    groups = committed_offsets(broker)
    names = broker.logs.list_topics()
    # User topics first, then internal ones (the overview folds those away).
    names = sorted(names, key=lambda n: (_internal(n), n))
    topics = [topic(broker, name, groups) for name in names]
    log_end = {(t["name"], p["partition"]): p["high_watermark"] for t in topics for p in t["partitions"]}
    return {
        "cluster_id": broker.cluster_id,
        "node_id": broker.node_id,
        "bootstrap": f"{broker.advertised_host}:{broker.advertised_port}",
        "now_ms": broker.clock.time_ms(),
        "topics": topics,
        "groups": [group(broker, g, log_end) for g in sorted(all_groups(broker))],
        "brokers": brokers(broker),
        "nemesis": nemesis,
    }


# --- showing record bytes ----------------------------------------------------------------

# `decoded` (the default): a key or value framed with the id of a schema the registry holds is
# decoded by that schema, anything else shown as text; the others show the bytes as they are
# (`schema` is the older name of `decoded`).
FORMATS = ("decoded", "text", "json", "hex", "base64", "schema")
DEFAULT_FORMAT = "decoded"


def show(data: bytes | None, fmt: str):
    """A key, value or header value as text, JSON (parsed; text when it is not JSON), hex or base64."""
    if data is None:
        return None
    if fmt == "hex":
        return data.hex(" ")
    if fmt == "base64":
        return base64.b64encode(data).decode()
    if fmt == "json":
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError):
            pass
    return data.decode("utf-8", "replace")


def show_decoded(data: bytes | None, fmt: str, registry) -> tuple[object, dict | None]:
    """(what to show, the schema that decoded it or None): with `decoded`, Confluent-framed bytes
    whose id the registry holds are decoded, everything else is shown as `show` shows it."""
    if fmt in ("decoded", "schema") and data is not None:
        found = schema_decoded(data, registry)
        if found is not None:
            return found.pop("value"), found
        fmt = "text"
    return show(data, fmt), None


def schema_decoded(data: bytes, registry) -> dict | None:
    """{"schema_id", "subject", "version", "type", "value"} (and "error" when the payload does not
    fit its schema) of Confluent-framed bytes (magic byte 0, a 4-byte id); None when the bytes are
    not framed with an id the registry holds. Avro and JSON payloads are decoded; a Protobuf
    payload is shown as hex (its message indexes and fields need the message descriptor)."""
    if registry is None or len(data) < 5 or data[0] != 0:
        return None
    schema_id = int.from_bytes(data[1:5], "big")
    found = registry.state.by_id.get(schema_id)
    if found is None:
        return None
    out = {"schema_id": schema_id, "subject": found.subject, "version": found.version, "type": found.schema_type}
    payload = data[5:]
    try:
        if found.schema_type == "AVRO":
            import io

            import avro.io

            parsed = registry.parse(found.schema_type, found.schema, found.references).schema
            value = avro.io.DatumReader(parsed).read(avro.io.BinaryDecoder(io.BytesIO(payload)))
            out["value"] = json.loads(json.dumps(value, default=lambda b: b.hex() if isinstance(b, bytes) else str(b)))
        elif found.schema_type == "JSON":
            out["value"] = json.loads(payload)
        else:
            out["value"] = payload.hex(" ")
    except Exception as exc:  # noqa: BLE001 - bytes that do not fit their schema are shown, not fatal
        out["error"] = f"cannot decode with schema {schema_id}: {exc}"
        out["value"] = payload.hex(" ")
    return out


def pretty_schema(kind: str, text: str) -> str:
    """A registered schema for reading: JSON (Avro, JSON Schema) indented; Protobuf as written."""
    if kind in ("AVRO", "JSON"):
        try:
            return json.dumps(json.loads(text), indent=2)
        except ValueError:
            return text
    return text


def schema_diff(old: str, new: str) -> list[tuple[str, str]]:
    """(kind, line) of a unified diff between two schema texts: kind add, del, hdr or ctx."""
    import difflib

    lines = []
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), "before", "after", lineterm="", n=3):
        kind = "hdr" if line.startswith(("---", "+++", "@@")) else "add" if line.startswith("+") else \
            "del" if line.startswith("-") else "ctx"
        lines.append((kind, line))
    return lines


def record(r: rec.Record, fmt: str, registry=None) -> dict:
    """A record as the browser shows it; `key_schema` / `value_schema` name the registered schema
    (id, subject, version, type) that decoded the key / value, else None."""
    key, key_schema = show_decoded(r.key, fmt, registry)
    value, value_schema = show_decoded(r.value, fmt, registry)
    return {
        "offset": r.offset,
        "timestamp": r.timestamp,
        "time": datetime.fromtimestamp(r.timestamp / 1000, timezone.utc).isoformat(timespec="milliseconds") if r.timestamp >= 0 else None,
        "key": key,
        "value": value,
        "key_schema": key_schema,
        "value_schema": value_schema,
        "headers": [{"key": k, "value": show(v, "text" if fmt in ("decoded", "schema") else fmt)} for k, v in r.headers],
        "key_size": -1 if r.key is None else len(r.key),
        "value_size": -1 if r.value is None else len(r.value),
    }
