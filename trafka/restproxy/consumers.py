"""The v2 consumer instances (`/consumers/...`), as Confluent's REST Proxy serves them: created
per group, kept per instance until deleted or idle for `rest.proxy.consumer.instance.timeout.ms`,
each a consumer of its own (trafka/restproxy/consumer.py).

Bodies and answers follow Confluent's v2 reference: creating answers `instance_id` and
`base_uri`; subscription, assignment, seeks and deletion answer 204; a commit answers 200 with
`[]`; records come back in the instance's embedded format, which the Accept header must name
(else 406 / 40601).
"""

from __future__ import annotations

import base64
import json
import logging
import re
import uuid

import trio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from trafka.restproxy import errors
from trafka.restproxy.consumer import EARLIEST, LATEST, ConsumerInstance

log = logging.getLogger("trafka.restproxy")

V2_JSON = "application/vnd.kafka.v2+json"
FORMATS = ("binary", "json", "avro", "jsonschema", "protobuf")
DEFAULT_REQUEST_TIMEOUT_MS = 1000  # Confluent's consumer.request.timeout.ms
MAX_REQUEST_TIMEOUT_MS = 30_000
DEFAULT_MAX_BYTES = 64 * 1024 * 1024  # Confluent's consumer.request.max.bytes
EXPIRY_CHECK_S = 1.0


def _answer(body, status: int = 200, media_type: str = V2_JSON) -> Response:
    return JSONResponse(body, status_code=status, media_type=media_type)


def _no_content() -> Response:
    return Response(status_code=204)


async def _body(request: Request, *, required: bool = True) -> dict | None:
    raw = await request.body()
    if not raw.strip():
        if required:
            raise errors.RestError(422, 422, "Request body is empty. Data is required.")
        return None
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"Unrecognized request body: {exc}") from None
    if not isinstance(body, dict):
        raise errors.RestError(422, 422, "The request body must be a JSON object")
    return body


def _partitions(body: dict, key: str = "partitions") -> list[tuple[str, int]]:
    items = body.get(key)
    if not isinstance(items, list):
        raise errors.RestError(422, 422, f"{key} may not be null")
    out = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("topic"), str) or not _is_int(item.get("partition")):
            raise errors.RestError(422, 422, f"each of {key} needs a topic (string) and a partition (integer)")
        out.append((item["topic"], item["partition"]))
    return out


def _offsets(body: dict) -> dict[tuple[str, int], tuple[int, str | None]]:
    items = body.get("offsets")
    if not isinstance(items, list):
        raise errors.RestError(422, 422, "offsets may not be null")
    out = {}
    for item in items:
        if (not isinstance(item, dict) or not isinstance(item.get("topic"), str) or not _is_int(item.get("partition"))
                or not _is_int(item.get("offset"))):
            raise errors.RestError(422, 422, "each offset needs a topic, a partition and an offset")
        out[(item["topic"], item["partition"])] = (item["offset"], item.get("metadata"))
    return out


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _setting(config: dict, name: str, default: str) -> str:
    value = config.get(name, default)
    return str(value).lower() if isinstance(value, bool) else str(value)


def accepted_format(request: Request) -> str:
    """The embedded format an Accept header asks records in (binary when it names none)."""
    for item in request.headers.get("accept", "").split(","):
        media = item.split(";")[0].strip().lower()
        if media.startswith("application/vnd.kafka.") and media.endswith(".v2+json"):
            middle = media[len("application/vnd.kafka."):-len(".v2+json")]
            if middle in FORMATS:
                return middle
    return "binary"


class ConsumerInstances:
    """Every v2 consumer instance of this proxy, by (group, name)."""

    def __init__(self, broker, nursery: trio.Nursery):
        self.broker = broker
        self.nursery = nursery
        self.instances: dict[tuple[str, str], ConsumerInstance] = {}
        self.expires: dict[tuple[str, str], float] = {}

    def timeout_ms(self) -> int:
        return self.broker.config["rest.proxy.consumer.instance.timeout.ms"]

    def _touch(self, key: tuple[str, str]) -> None:
        """The instance was used: it expires the instance timeout from now, on the broker clock
        (so a test moves time with the clock, as for every other deadline)."""
        self.expires[key] = self.broker.clock.timer_ms() + self.timeout_ms()

    async def expire_idle(self) -> None:
        """Delete instances nobody used for the instance timeout (Confluent's
        consumer.instance.timeout.ms): they leave their group, committing if auto-commit is on."""
        while True:
            with trio.move_on_after(EXPIRY_CHECK_S):
                await self.broker.wait_clock_moved()  # a moved broker clock is looked at at once
            now = self.broker.clock.timer_ms()
            for key in [k for k, at in self.expires.items() if at <= now]:
                self._expire(key)

    def _expire(self, key: tuple[str, str]) -> None:
        instance = self.instances.pop(key, None)
        self.expires.pop(key, None)
        if instance is not None:
            log.info("rest proxy: consumer instance %s/%s expired after %d ms idle", *key, self.timeout_ms())
            self.nursery.start_soon(self._close_quietly, instance)

    async def _close_quietly(self, instance: ConsumerInstance) -> None:
        try:
            async with instance.lock:
                await instance.close()
        except Exception as exc:  # noqa: BLE001 - an expiry that cannot leave cleanly: the session times out
            log.warning("rest proxy: consumer instance %s/%s did not leave cleanly: %s", instance.group, instance.name, exc)

    def _get(self, group: str, name: str) -> ConsumerInstance:
        if self.expires.get((group, name), 0) <= self.broker.clock.timer_ms():
            self._expire((group, name))  # expired, though the next check has not come yet
        instance = self.instances.get((group, name))
        if instance is None:
            raise errors.consumer_instance_not_found()
        self._touch((group, name))
        return instance

    # --- endpoints -------------------------------------------------------------------------

    async def create(self, request: Request) -> Response:
        group = request.path_params["group"]
        config = await _body(request, required=False) or {}
        name = config.get("id") or config.get("name") or f"rest-consumer-{uuid.uuid4()}"
        fmt = str(config.get("format") or "binary").lower()
        if fmt not in FORMATS:
            raise errors.invalid_consumer_config(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
        reset = _setting(config, "auto.offset.reset", "latest").lower()
        if reset not in ("earliest", "latest", "none"):
            raise errors.invalid_consumer_config(
                f'Invalid value {reset} for configuration auto.offset.reset: String must be one of: latest, earliest, none')
        auto_commit = _setting(config, "auto.commit.enable", "true").lower()
        if auto_commit not in ("true", "false"):
            raise errors.invalid_consumer_config(f"auto.commit.enable must be true or false, not {auto_commit!r}")
        isolation = _setting(config, "isolation.level", "read_uncommitted").lower()
        if isolation not in ("read_uncommitted", "read_committed"):
            raise errors.invalid_consumer_config(
                f"Invalid value {isolation} for configuration isolation.level: String must be one of: "
                "read_committed, read_uncommitted")
        try:
            request_timeout = int(_setting(config, "consumer.request.timeout.ms", str(DEFAULT_REQUEST_TIMEOUT_MS)))
            min_bytes = int(_setting(config, "fetch.min.bytes", "1"))
        except ValueError as exc:
            raise errors.invalid_consumer_config(str(exc)) from None
        if (group, name) in self.instances:
            raise errors.consumer_already_exists()
        self.instances[(group, name)] = ConsumerInstance(
            self.broker, group, name, request.state.principal, fmt=fmt, reset=reset, auto_commit=auto_commit == "true",
            request_timeout_ms=min(max(request_timeout, 0), MAX_REQUEST_TIMEOUT_MS), fetch_min_bytes=min_bytes,
            read_committed=isolation == "read_committed")
        self._touch((group, name))
        base = str(request.base_url).rstrip("/")
        return _answer({"instance_id": name, "base_uri": f"{base}/consumers/{group}/instances/{name}"})

    async def delete(self, request: Request) -> Response:
        key = (request.path_params["group"], request.path_params["instance"])
        instance = self._get(*key)
        self.instances.pop(key, None)
        self.expires.pop(key, None)
        async with instance.lock:
            await instance.close()
        return _no_content()

    async def subscribe(self, request: Request) -> Response:
        instance = self._get(request.path_params["group"], request.path_params["instance"])
        body = await _body(request)
        topics, pattern = body.get("topics"), body.get("topic_pattern")
        if (topics is None) == (pattern is None):
            raise errors.illegal_state("Subscription to topics, partitions and pattern are mutually exclusive")
        if topics is not None and (not isinstance(topics, list) or not all(isinstance(t, str) for t in topics)):
            raise errors.RestError(422, 422, "topics must be a list of topic names")
        if pattern is not None:
            if not isinstance(pattern, str):
                raise errors.RestError(422, 422, "topic_pattern must be a string")
            try:
                re.compile(pattern)
            except re.error as exc:
                raise errors.RestError(422, 422, f"topic_pattern is not a valid pattern: {exc}") from None
        async with instance.lock:
            await instance.subscribe(self.nursery, topics, pattern)
        return _no_content()

    async def subscription(self, request: Request) -> Response:
        instance = self._get(request.path_params["group"], request.path_params["instance"])
        return _answer({"topics": list(instance.topics or [])})

    async def unsubscribe(self, request: Request) -> Response:
        instance = self._get(request.path_params["group"], request.path_params["instance"])
        async with instance.lock:
            await instance.unsubscribe()
        return _no_content()

    async def assign(self, request: Request) -> Response:
        instance = self._get(request.path_params["group"], request.path_params["instance"])
        partitions = _partitions(await _body(request))
        async with instance.lock:
            instance.assign(partitions)
        return _no_content()

    async def assignments(self, request: Request) -> Response:
        instance = self._get(request.path_params["group"], request.path_params["instance"])
        return _answer({"partitions": [{"topic": t, "partition": p} for t, p in instance.assignment()]})

    async def seek(self, request: Request) -> Response:
        instance = self._get(request.path_params["group"], request.path_params["instance"])
        offsets = _offsets(await _body(request))
        async with instance.lock:
            await instance.seek({tp: offset for tp, (offset, _) in offsets.items()})
        return _no_content()

    async def seek_beginning(self, request: Request) -> Response:
        return await self._seek_to(request, EARLIEST)

    async def seek_end(self, request: Request) -> Response:
        return await self._seek_to(request, LATEST)

    async def _seek_to(self, request: Request, timestamp: int) -> Response:
        instance = self._get(request.path_params["group"], request.path_params["instance"])
        partitions = _partitions(await _body(request))
        async with instance.lock:
            await instance.seek_to(partitions, timestamp)
        return _no_content()

    async def commit(self, request: Request) -> Response:
        instance = self._get(request.path_params["group"], request.path_params["instance"])
        body = await _body(request, required=False)
        async with instance.lock:
            if body is None or body.get("offsets") is None:
                await instance.commit_positions()
            else:  # the offsets of the last records read: the next ones to read are committed
                await instance.commit({tp: (offset + 1, meta) for tp, (offset, meta) in _offsets(body).items()})
        return _answer([])

    async def committed(self, request: Request) -> Response:
        instance = self._get(request.path_params["group"], request.path_params["instance"])
        body = await _body(request, required=False)
        if body is None:
            raise errors.partition_not_found()
        partitions = _partitions(body)
        found = await instance.committed(partitions)
        return _answer({"offsets": [{"topic": t, "partition": p, "offset": found[(t, p)][0], "metadata": found[(t, p)][1]}
                                    for t, p in partitions if (t, p) in found and found[(t, p)][0] >= 0]})

    async def records(self, request: Request) -> Response:
        instance = self._get(request.path_params["group"], request.path_params["instance"])
        wanted = accepted_format(request)
        if wanted != instance.format:
            raise errors.consumer_format_mismatch()
        timeout = _query_int(request, "timeout", -1)
        max_bytes = _query_int(request, "max_bytes", -1)
        timeout = instance.request_timeout_ms if timeout < 0 else min(timeout, MAX_REQUEST_TIMEOUT_MS)
        max_bytes = DEFAULT_MAX_BYTES if max_bytes <= 0 else max_bytes
        async with instance.lock:
            found = await instance.read(timeout, max_bytes)
        rendered = [{"topic": topic, "key": await _render(self.broker, instance.format, r.key),
                     "value": await _render(self.broker, instance.format, r.value),
                     "partition": partition, "offset": r.offset} for topic, partition, r in found]
        return _answer(rendered, media_type=f"application/vnd.kafka.{instance.format}.v2+json")

    def routes(self) -> list[Route]:
        base = "/consumers/{group}/instances/{instance}"
        return [
            Route("/consumers/{group}", self.create, methods=["POST"]),
            Route(base, self.delete, methods=["DELETE"]),
            Route(f"{base}/subscription", self.subscribe, methods=["POST"]),
            Route(f"{base}/subscription", self.subscription, methods=["GET"]),
            Route(f"{base}/subscription", self.unsubscribe, methods=["DELETE"]),
            Route(f"{base}/assignments", self.assign, methods=["POST"]),
            Route(f"{base}/assignments", self.assignments, methods=["GET"]),
            Route(f"{base}/positions", self.seek, methods=["POST"]),
            Route(f"{base}/positions/beginning", self.seek_beginning, methods=["POST"]),
            Route(f"{base}/positions/end", self.seek_end, methods=["POST"]),
            Route(f"{base}/offsets", self.commit, methods=["POST"]),
            Route(f"{base}/offsets", self.committed, methods=["GET"]),
            Route(f"{base}/records", self.records, methods=["GET"]),
        ]


def _query_int(request: Request, name: str, default: int) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise errors.bad_request(f"query parameter {name} must be an integer, not {text!r}") from None


async def _render(broker, fmt: str, data: bytes | None):
    """A stored key or value as the instance's embedded format shows it (formats.render)."""
    if data is None:
        return None
    if fmt == "binary":
        return base64.b64encode(data).decode()
    from trafka.restproxy.formats import render

    result = render(broker, fmt, data)
    return await result if hasattr(result, "__await__") else result
