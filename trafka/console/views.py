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

from trafka.broker.coordinator.formats import assigned_partitions, subscribed_topics
from trafka.broker.coordinator.group import CONSUMER_PROTOCOL_TYPE
from trafka.storage.errors import OffsetOutOfRange, UnknownTopic
from trafka.storage.retention import segment_largest_timestamp
from trafka.wire import records as rec
from trafka.wire.text import printable

MAX_RECORDS = 500  # one page of the record browser
MAX_READ_BYTES = 4 << 20  # bytes read from a log for one page
TAIL_CELLS = 48  # records drawn as cells at the head of the partition diagram


def partition_log(broker, topic: str, partition: int):
    """The log, or LookupError (-> 404) naming what is missing."""
    if topic not in broker.logs.topics:
        raise LookupError(f"unknown topic {topic!r}")
    try:
        return broker.logs.log(topic, partition)
    except UnknownTopic:
        raise LookupError(f"topic {topic!r} has no partition {partition}") from None


def all_groups(broker) -> dict:
    """Every group by id: classic groups and KIP-848 consumer groups (an id is one or the other)."""
    coordinator = broker.group_coordinator
    return {**coordinator.groups, **coordinator.consumer_groups}


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
    log = partition_log(broker, topic, index)
    segments = log.segments
    hw = log.high_watermark
    if groups is None:
        groups = committed_offsets(broker)
    view = {
        "partition": index,
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
    meta = broker.logs.topics[name]
    config = broker.logs.log_config(name)
    if groups is None:
        groups = committed_offsets(broker)
    partitions = [partition(broker, name, p, groups=groups) for p in range(meta.partitions)]
    return {
        "name": name,
        "topic_id": str(meta.topic_id),
        "internal": name.startswith("__"),
        "cleanup_policy": ",".join(sorted(config.cleanup_policy)),
        "retention_ms": config.retention_ms,
        "retention_bytes": config.retention_bytes,
        "segment_bytes": config.segment_bytes,
        "configs": dict(meta.configs),
        "size": sum(p["size"] for p in partitions),
        "partitions": partitions,
    }


def _consumer_group_members(g) -> tuple[list[dict], dict[tuple[str, int], str]]:
    """A KIP-848 group's members as the view shows members, and who owns which partition
    (topic names from the group's subscribed-topic metadata)."""
    names = {topic_id: name for name, (topic_id, _) in g.subscription_metadata.items()}
    members, owners = [], {}
    for member in g.members.values():
        assignment = {names.get(topic_id, str(topic_id)): partitions for topic_id, partitions in member.assigned.items()}
        for t, parts in assignment.items():
            owners.update({(t, p): member.member_id for p in parts})
        members.append({
            "member_id": printable(member.member_id),
            "group_instance_id": printable(member.instance_id),
            "client_id": printable(member.client_id),
            "client_host": member.client_host,
            "session_timeout_ms": None,
            "member_epoch": member.member_epoch,
            "subscription": sorted(member.subscribed_topic_names) + (
                [member.subscribed_topic_regex] if member.subscribed_topic_regex else []),
            "assignment": [{"topic": t, "partitions": sorted(p)} for t, p in sorted(assignment.items())],
        })
    return members, owners


def group(broker, group_id: str, log_end: dict | None = None) -> dict:
    coordinator = broker.group_coordinator
    g = coordinator.groups.get(group_id)
    modern = coordinator.consumer_groups.get(group_id)
    if g is None and modern is None:
        raise LookupError(f"unknown group {group_id!r}")
    if modern is not None:
        g = modern
        members, owners = _consumer_group_members(modern)
    else:
        members, owners = _classic_group_members(g)
    offsets = []
    for (t, p) in sorted({*g.offsets, *owners}):
        committed = g.offsets.get((t, p))
        end = _high_watermark(broker, t, p) if log_end is None else log_end.get((t, p))
        offsets.append({
            "topic": t,
            "partition": p,
            "committed_offset": committed.offset if committed else None,
            "log_end_offset": end,
            "lag": max(end - committed.offset, 0) if committed and end is not None else None,
            "metadata": committed.metadata if committed else None,
            "commit_timestamp": committed.commit_timestamp if committed else None,
            "member_id": owners.get((t, p)),
        })
    if modern is not None:
        header = {"group_type": "consumer", "protocol": coordinator.preferred_assignor(modern) if modern.members else None,
                  "generation": modern.group_epoch, "leader": None}
    else:
        header = {"group_type": "classic", "protocol": g.protocol_name, "generation": g.generation, "leader": g.leader_id}
    return {
        "group_id": group_id,
        "state": g.state.value,
        "protocol_type": g.protocol_type,
        **header,
        "state_since_ms": g.state_timestamp,
        "members": members,
        "offsets": offsets,
        "total_lag": sum(o["lag"] or 0 for o in offsets),
    }


def _classic_group_members(g) -> tuple[list[dict], dict[tuple[str, int], str]]:
    consumer = g.protocol_type == CONSUMER_PROTOCOL_TYPE
    members, owners = [], {}
    for member in g.members.values():
        assignment = assigned_partitions(member.assignment) if consumer and member.assignment else None
        subscription = subscribed_topics(member.metadata(g.protocol_name or "") or b"") if consumer else None
        for t, parts in (assignment or {}).items():
            owners.update({(t, p): member.member_id for p in parts})
        members.append({
            "member_id": printable(member.member_id),
            "group_instance_id": printable(member.group_instance_id),
            "client_id": printable(member.client_id),
            "client_host": member.client_host,
            "session_timeout_ms": member.session_timeout_ms,
            "subscription": sorted(subscription) if subscription is not None else None,
            "assignment": [{"topic": t, "partitions": sorted(p)} for t, p in sorted((assignment or {}).items())],
        })
    return members, owners


def _high_watermark(broker, topic: str, index: int) -> int | None:
    try:
        return broker.logs.log(topic, index).high_watermark
    except UnknownTopic:
        return None


def cluster(broker) -> dict:
    groups = committed_offsets(broker)
    topics = [topic(broker, name, groups) for name in broker.logs.list_topics()]
    log_end = {(t["name"], p["partition"]): p["high_watermark"] for t in topics for p in t["partitions"]}
    return {
        "cluster_id": broker.cluster_id,
        "node_id": broker.node_id,
        "bootstrap": f"{broker.advertised_host}:{broker.advertised_port}",
        "now_ms": broker.clock.time_ms(),
        "topics": topics,
        "groups": [group(broker, g, log_end) for g in sorted(all_groups(broker))],
    }


# --- showing record bytes ----------------------------------------------------------------

FORMATS = ("text", "json", "hex", "base64")


def show(data: bytes | None, fmt: str):
    """A key, value or header value as text, JSON (parsed; text when it is not JSON) or hex."""
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


def record(r: rec.Record, fmt: str) -> dict:
    return {
        "offset": r.offset,
        "timestamp": r.timestamp,
        "time": datetime.fromtimestamp(r.timestamp / 1000, timezone.utc).isoformat(timespec="milliseconds") if r.timestamp >= 0 else None,
        "key": show(r.key, fmt),
        "value": show(r.value, fmt),
        "headers": [{"key": k, "value": show(v, fmt)} for k, v in r.headers],
        "key_size": -1 if r.key is None else len(r.key),
        "value_size": -1 if r.value is None else len(r.value),
    }
