"""The JSON API under /api/v1/ (what the pages show, and the actions), and its live streams.

    GET    /api/v1/cluster                                     topics, partitions, groups
    GET    /api/v1/topics[/{topic}]
    GET    /api/v1/topics/{topic}/partitions/{p}               segments, retention, group markers, newest records
    GET    /api/v1/topics/{topic}/partitions/{p}/records       ?offset=N | ?timestamp=MS, &limit=, &format=decoded|text|json|hex|base64
    GET    /api/v1/groups[/{group}]                            members, assignments, offsets, lag, rebalances
    GET    /api/v1/broker                                      settings with sources, connections, request rates
    GET    /api/v1/stream/{cluster|broker|topics/T/partitions/P|groups/G}   the same as server-sent events
    POST   /api/v1/topics                                      {"name", "partitions"?, "configs"?}
    DELETE /api/v1/topics/{topic}
    POST   /api/v1/topics/{topic}/partitions/{p}/records       {"key"?, "value"?, "headers"?: {name: value}}
    POST   /api/v1/topics/{topic}/partitions/{p}/delete-records {"offset": N}   (-1: the high watermark)
    POST   /api/v1/groups/{group}/reset-offsets                {"to": "earliest"|"latest"|"offset"|"timestamp", "offset"?, "timestamp"?, "topic"?}

Bad input is a 400 with {"error": message}; an unknown topic, partition or group a 404; a
Kafka error from an action a 409 with the error's name.
"""

from __future__ import annotations

import math

from trafka.wire.text import printable

import json
import time

import trio
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from trafka.console import actions, views
from trafka.console.app import ApiError
from trafka.console.history import history_of

MAX_LIMIT = views.MAX_RECORDS
MAX_BODY = 1 << 20
MIN_INTERVAL = 0.25  # seconds between two looks at the state for a stream


def int_param(request, name: str, default=None, *, lo: int | None = None, hi: int | None = None):
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    return checked_int(text, name, lo, hi)


def checked_int(value, name: str, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool):
        raise ApiError(400, f"{name} must be an integer, got {value!r}")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ApiError(400, f"{name} must be an integer, got {value!r}") from None
    if isinstance(value, float) and value != number:
        raise ApiError(400, f"{name} must be an integer, got {value!r}")
    lo = -(2**63) if lo is None else lo  # everything ends up in a Kafka INT64 at most
    hi = 2**63 - 1 if hi is None else hi
    if lo is not None and number < lo:
        raise ApiError(400, f"{name} must be at least {lo}, got {number}")
    if hi is not None and number > hi:
        raise ApiError(400, f"{name} must be at most {hi}, got {number}")
    return number


async def json_body(request) -> dict:
    chunks, size = [], 0
    async for chunk in request.stream():  # never hold more than the limit in memory
        size += len(chunk)
        if size > MAX_BODY:
            raise ApiError(413, "the request body is larger than 1 MiB")
        chunks.append(chunk)
    raw = b"".join(chunks)
    try:
        body = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"the request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return body


def _bytes(value, name: str) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (dict, list, int, float, bool)):
        return json.dumps(value).encode()
    raise ApiError(400, f"{name} must be a string or JSON value")


def records_query(broker, request, topic: str, index: int) -> dict:
    log = views.partition_log(broker, topic, index)
    fmt = request.query_params.get("format", views.DEFAULT_FORMAT)
    if fmt not in views.FORMATS:
        raise ApiError(400, f"format must be one of {', '.join(views.FORMATS)}, got {fmt!r}")
    limit = int_param(request, "limit", 50, lo=1, hi=MAX_LIMIT)
    offset = int_param(request, "offset", None, lo=0)
    timestamp = int_param(request, "timestamp", None, lo=0)
    if offset is not None and timestamp is not None:
        raise ApiError(400, "give offset or timestamp, not both")
    if timestamp is not None:
        found = log.offset_for_timestamp(timestamp)
        start = found.offset if found else log.high_watermark
    else:
        start = log.log_start_offset if offset is None else offset
    found_records = views.read_records(log, start, limit) if start < log.high_watermark else []
    registry = broker.schema_registry_if_used() if fmt in ("decoded", "schema") and found_records else None
    return {
        "topic": topic,
        "partition": index,
        "from_offset": start,
        "log_start_offset": log.log_start_offset,
        "high_watermark": log.high_watermark,
        "format": fmt,
        "records": [views.record(r, fmt, registry) for r in found_records],
        "next_offset": (found_records[-1].offset + 1) if found_records else start,
    }


def telemetry_view(broker) -> list[dict]:
    """Each client instance that asked for its telemetry subscription (KIP-714): its
    subscription and the metrics it pushed last, decoded (trafka/broker/operations/telemetry.py)."""
    return [
        {"instance_id": str(t.instance_id), "client_id": printable(t.client_id),
         "software": printable(" ".join(p for p in (t.software_name, t.software_version) if p)) or None,
         "requested_metrics": t.metrics, "push_interval_ms": t.interval_ms, "pushes": t.pushes,
         "last_push_ms": t.last_push_ms, "terminated": t.terminated,
         "metrics": [{"name": printable(m["name"]), "value": m["value"] if math.isfinite(m["value"]) else None,
                      "attributes": {printable(k): printable(v) for k, v in m["attributes"].items()}}
                     for m in t.latest]}
        for t in sorted(broker.client_metrics.clients.values(), key=lambda t: str(t.instance_id))
    ]


def broker_view(broker) -> dict:
    from trafka.broker.config import SETTINGS

    config = broker.config
    settings = []
    for name in sorted(SETTINGS):
        explicit = name in config.values
        settings.append({
            "name": name,
            "value": str(config.raw[name]) if explicit else _setting_text(config[name]),
            "source": "STATIC_BROKER_CONFIG" if explicit else "DEFAULT_CONFIG",
            "doc": SETTINGS[name].doc,
        })
    stats = broker.stats
    from trafka.console.history import rates_of

    return {
        "node_id": broker.node_id,
        "cluster_id": broker.cluster_id,
        "listener": f"{broker.host}:{broker.port}",
        "advertised": f"{broker.advertised_host}:{broker.advertised_port}",
        "data_dir": str(broker.data_dir),
        "console_url": broker.console_url,
        "uptime_s": round(time.time() - stats.started, 1),
        "settings": settings,
        "connections": [
            {"peer": c.peer, "client_id": c.client_id, "software_name": c.software_name,
             "software_version": c.software_version, "requests": c.requests, "last_api": c.last_api,
             "opened_ms": c.opened_ms,
             "client_instance_id": str(c.client_instance_id) if c.client_instance_id is not None else None}
            for c in sorted(stats.connections.values(), key=lambda c: c.opened_ms)
        ],
        "requests": [
            {"api": name, "count": s.count, "per_second": rates_of(broker).get(name, 0.0),
             "mean_ms": round(1000 * s.seconds / s.count, 3) if s.count else 0.0}
            for name, s in sorted(stats.apis.items())
        ],
        "telemetry": telemetry_view(broker),
        "bytes_in": dict(sorted(stats.bytes_in.items())),
        "bytes_out": dict(sorted(stats.bytes_out.items())),
    }


def _setting_text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def group_view(broker, group_id: str) -> dict:
    view = views.group(broker, group_id)
    view["rebalances"] = history_of(broker, group_id)
    if view["group_type"] == "share":
        view["share_partitions"] = broker.share_coordinator.describe(group_id, broker.group_coordinator.topic_name)
    return view


def routes(broker) -> list:
    def topic_arg(request) -> str:
        name = request.path_params["topic"]
        if name not in broker.logs.topics:
            raise LookupError(f"unknown topic {name!r}")
        return name

    async def cluster(request):
        return JSONResponse(views.cluster(broker))

    async def topics(request):
        groups = views.committed_offsets(broker)
        return JSONResponse([views.topic(broker, name, groups) for name in broker.logs.list_topics()])

    async def topic(request):
        return JSONResponse(views.topic(broker, topic_arg(request)))

    async def partition(request):
        return JSONResponse(views.partition(broker, topic_arg(request), request.path_params["partition"], tail=True))

    async def records(request):
        topic = topic_arg(request)
        index = request.path_params["partition"]
        if request.method == "POST":
            body = await json_body(request)
            unknown = set(body) - {"key", "value", "headers"}
            if unknown:
                raise ApiError(400, f"unknown fields {sorted(unknown)}; a record has key, value, headers")
            headers = body.get("headers") or {}
            if not isinstance(headers, dict):
                raise ApiError(400, "headers must be an object of name: value")
            views.partition_log(broker, topic, index)
            result = await actions.produce(broker, topic, index, _bytes(body.get("key"), "key"),
                                           _bytes(body.get("value"), "value"),
                                           [(str(k), _bytes(v, f"header {k}")) for k, v in headers.items()])
            return JSONResponse(result, status_code=201)
        return JSONResponse(records_query(broker, request, topic, index))

    async def delete_records(request):
        topic = topic_arg(request)
        index = request.path_params["partition"]
        body = await json_body(request)
        if "offset" not in body:
            raise ApiError(400, 'delete-records takes {"offset": N} (-1: the high watermark)')
        offset = checked_int(body["offset"], "offset", lo=-1)
        views.partition_log(broker, topic, index)
        return JSONResponse(await actions.delete_records(broker, topic, index, offset))

    async def create_topic(request):
        body = await json_body(request)
        name = body.get("name")
        if not isinstance(name, str) or not name:
            raise ApiError(400, 'create takes {"name": "...", "partitions": N, "configs": {...}}')
        partitions = checked_int(body.get("partitions", -1), "partitions", lo=-1, hi=10000)
        if partitions == 0:
            raise ApiError(400, "partitions must be at least 1")
        configs = body.get("configs") or {}
        if not isinstance(configs, dict):
            raise ApiError(400, "configs must be an object of name: value")
        return JSONResponse(await actions.create_topic(broker, name, partitions, {str(k): str(v) for k, v in configs.items()}),
                            status_code=201)

    async def delete_topic(request):
        return JSONResponse(await actions.delete_topic(broker, topic_arg(request)))

    async def groups(request):
        return JSONResponse([views.group(broker, g) for g in sorted(views.all_groups(broker))])

    async def group(request):
        return JSONResponse(group_view(broker, request.path_params["group"]))

    async def reset_offsets(request):
        group_id = request.path_params["group"]
        body = await json_body(request)
        g = views.all_groups(broker).get(group_id)
        if g is None:
            raise LookupError(f"unknown group {group_id!r}")
        if g.members:
            raise ApiError(409, f"group {group_id!r} is {g.state.value} with {len(g.members)} members; "
                                "offsets can be reset only while it is Empty (stop its consumers first)")
        to = body.get("to")
        if to not in ("earliest", "latest", "offset", "timestamp"):
            raise ApiError(400, 'reset-offsets takes {"to": "earliest" | "latest" | "offset" | "timestamp"}')
        offset = checked_int(body.get("offset"), "offset", lo=0) if to == "offset" else None
        timestamp = checked_int(body.get("timestamp"), "timestamp", lo=0) if to == "timestamp" else None
        wanted = body.get("topic")
        if wanted is not None and wanted not in broker.logs.topics:
            raise LookupError(f"unknown topic {wanted!r}")
        partitions = sorted(key for key in g.offsets if (wanted is None or key[0] == wanted) and key[0] in broker.logs.topics)
        if wanted is not None and not partitions:
            partitions = [(wanted, p) for p in range(broker.logs.topics[wanted].partitions)]
        if not partitions:
            raise ApiError(400, f"group {group_id!r} has no committed offsets; name a topic")
        return JSONResponse(await actions.reset_offsets(broker, group_id, to, partitions, offset, timestamp))

    async def broker_info(request):
        return JSONResponse(broker_view(broker))

    # --- live streams ---------------------------------------------------------------------

    def stream_of(make):
        async def events():
            last = None
            quiet = 0.0
            while True:
                started = time.perf_counter()
                try:
                    data = json.dumps(make(), separators=(",", ":"))
                except LookupError as exc:
                    message = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
                    yield f"event: gone\ndata: {json.dumps({'error': message})}\n\n"
                    return
                spent = time.perf_counter() - started
                if data != last:
                    last, quiet = data, 0.0
                    yield f"data: {data}\n\n"
                elif quiet > 15:
                    quiet = 0.0
                    yield ": keep-alive\n\n"
                # Look again after new records arrive or a short while; never more than ~5% of the loop.
                wait = max(MIN_INTERVAL, 20 * spent)
                quiet += wait
                with trio.move_on_after(wait):
                    await broker.wait_for_data()
                    await trio.sleep(0.05)  # let the rest of a burst land first

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def stream_cluster(request):
        return stream_of(lambda: views.cluster(broker))

    async def stream_partition(request):
        topic_arg(request)
        t, p = request.path_params["topic"], request.path_params["partition"]
        views.partition_log(broker, t, p)
        return stream_of(lambda: views.partition(broker, t, p, tail=True))

    async def stream_group(request):
        group_id = request.path_params["group"]
        group_view(broker, group_id)
        return stream_of(lambda: group_view(broker, group_id))

    async def stream_broker(request):
        return stream_of(lambda: broker_view(broker))

    p = "/api/v1"
    part = "/topics/{topic}/partitions/{partition:int}"
    return [
        Route(f"{p}/cluster", cluster),
        Route(f"{p}/topics", topics, methods=["GET"]),
        Route(f"{p}/topics", create_topic, methods=["POST"]),
        Route(f"{p}/topics/{{topic}}", topic, methods=["GET"]),
        Route(f"{p}/topics/{{topic}}", delete_topic, methods=["DELETE"]),
        Route(f"{p}{part}", partition),
        Route(f"{p}{part}/records", records, methods=["GET", "POST"]),
        Route(f"{p}{part}/delete-records", delete_records, methods=["POST"]),
        Route(f"{p}/groups", groups),
        Route(f"{p}/groups/{{group}}", group),
        Route(f"{p}/groups/{{group}}/reset-offsets", reset_offsets, methods=["POST"]),
        Route(f"{p}/broker", broker_info),
        Route(f"{p}/stream/cluster", stream_cluster),
        Route(f"{p}/stream{part}", stream_partition),
        Route(f"{p}/stream/groups/{{group}}", stream_group),
        Route(f"{p}/stream/broker", stream_broker),
    ]
