"""Injected faults: test control as data, checked in one place in dispatch.

A fault is a small record: which requests it matches (an API, optionally a topic and
partition for Produce, Fetch and ListOffsets), what it does (answer with an error code, delay
the answer, drop the connection before answering, report a throttle time) and how many more
requests it applies to (`remaining`; None: until removed). `FaultTable.intercept` is the only
caller: dispatch hands it every request while any fault is armed. The same table holds the
broker-wide "down for N ms": every connection is closed, and new ones are closed as soon as
they are accepted, until the time is up; all state stays, as across a restart. And it holds
the storage faults of internal topics (`append_fails` with a `topic`): the next appends to that
topic's log fail as a disk refusing the write (StorageWriteFailed, KAFKA_STORAGE_ERROR), which
is how tests show a coordinator writes first and changes its state only after
(`FaultTable.check_append`, called by `InternalTopic.append`).

The shape follows librdkafka's mock cluster (`rd_kafka_mock_push_request_errors`) and
franz-go kfake's `ControlKey`. Specs come from Python (`TrafkaBroker.inject_fault`) or JSON
(`POST /api/v1/faults`); both go through `parse_fault`, which refuses unknown APIs, unknown
error names and bad values with a ValueError saying which.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from dataclasses import dataclass

import trio

from trafka.broker.requests.error_responses import error_response
from trafka.broker.requests.routes import ROUTES, load_handlers
from trafka.storage.errors import StorageWriteFailed
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.faults")

PRODUCE, FETCH, LIST_OFFSETS = 0, 1, 2


@dataclass(frozen=True)
class _Partitioned:
    """Where a partitioned request lists its topics and partitions, and its response answers."""

    request_topics: str
    request_partitions: str
    request_partition: str
    response_topics: str
    response_partitions: str


PARTITIONED = {
    PRODUCE: _Partitioned("topic_data", "partition_data", "index", "responses", "partition_responses"),
    FETCH: _Partitioned("topics", "partitions", "partition", "responses", "partitions"),
    LIST_OFFSETS: _Partitioned("topics", "partitions", "partition_index", "topics", "partitions"),
}


class ConnectionDropped(Exception):
    """An injected fault closes this connection without an answer."""


@dataclass
class Fault:
    id: int
    api_key: int | None  # None: the broker-wide "down"
    topic: str | None = None
    partition: int | None = None
    error: ErrorCode | None = None
    delay_ms: int = 0
    drop_connection: bool = False
    throttle_ms: int = 0
    down_ms: int = 0
    remaining: int | None = None  # None: every matching request until removed
    fired: int = 0
    append_fails: bool = False  # a storage fault: appends to `topic` (and `partition`) fail

    def describe(self) -> dict:
        api = ROUTES[self.api_key].api.name if self.api_key is not None else None
        out: dict = {"id": self.id, "api": api, "api_key": self.api_key}
        if self.topic is not None:
            out["topic"] = self.topic
        if self.partition is not None:
            out["partition"] = self.partition
        if self.error is not None:
            out["error"] = self.error.name
        for name in ("delay_ms", "throttle_ms", "down_ms"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.drop_connection:
            out["drop_connection"] = True
        if self.append_fails:
            out["append_fails"] = True
        out["remaining"] = self.remaining
        out["fired"] = self.fired
        return out


_FIELDS = {"api", "error", "count", "delay_ms", "drop_connection", "throttle_ms", "topic", "partition", "down_ms",
           "append_fails"}


def _api_key(api) -> int:
    load_handlers()
    if isinstance(api, int) and not isinstance(api, bool):
        if api in ROUTES:
            return api
        raise ValueError(f"unknown API key {api}: trafka serves {sorted(ROUTES)}")
    if isinstance(api, str):
        wanted = api.replace("_", "").replace(" ", "").lower()
        for key, route in ROUTES.items():
            if route.api.name.lower() == wanted or api.strip().isdigit() and int(api) == key:
                return key
        names = ", ".join(sorted(route.api.name for route in ROUTES.values()))
        raise ValueError(f"unknown API {api!r}; one of: {names} (or an API key)")
    raise ValueError(f"api must be an API name or key, got {api!r}")


def _error(name) -> ErrorCode:
    if isinstance(name, str) and name.upper() in ErrorCode.__members__:
        code = ErrorCode[name.upper()]
    elif isinstance(name, int) and not isinstance(name, bool) and name in ErrorCode._value2member_map_:
        code = ErrorCode(name)
    else:
        raise ValueError(f"unknown error {name!r}: use a Kafka error name such as NOT_LEADER_OR_FOLLOWER")
    if code == ErrorCode.NONE:
        raise ValueError("error NONE is not a fault")
    return code


def _whole(spec: dict, name: str, minimum: int = 0) -> int | None:
    value = spec.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return value


def parse_fault(spec: dict, fault_id: int) -> Fault:
    """A Fault from its JSON/keyword form, or a ValueError saying what is wrong."""
    if not isinstance(spec, dict):
        raise ValueError("a fault is a JSON object")
    unknown = set(spec) - _FIELDS
    if unknown:
        raise ValueError(f"unknown fault field(s) {sorted(unknown)}; known: {sorted(_FIELDS)}")
    count = _whole(spec, "count", 1)
    down_ms = _whole(spec, "down_ms", 1)
    if down_ms is not None:
        if set(spec) - {"down_ms"}:
            raise ValueError("down_ms is broker-wide: give it alone")
        return Fault(fault_id, None, down_ms=down_ms, remaining=1)
    if spec.get("append_fails") is not None:
        if spec["append_fails"] is not True:
            raise ValueError(f"append_fails must be true, got {spec['append_fails']!r}")
        if set(spec) - {"append_fails", "topic", "partition", "count"}:
            raise ValueError("append_fails takes only a topic, a partition and a count")
        topic = spec.get("topic")
        if not isinstance(topic, str) or not topic:
            raise ValueError("append_fails needs the topic whose appends fail")
        return Fault(fault_id, None, topic=topic, partition=_whole(spec, "partition"), append_fails=True, remaining=count)
    if spec.get("api") is None:
        raise ValueError("a fault needs an api (a name such as Produce, or a key), or down_ms")
    fault = Fault(fault_id, _api_key(spec["api"]), remaining=count)
    if spec.get("error") is not None:
        fault.error = _error(spec["error"])
    fault.delay_ms = _whole(spec, "delay_ms") or 0
    fault.throttle_ms = _whole(spec, "throttle_ms") or 0
    drop = spec.get("drop_connection", False)
    if not isinstance(drop, bool):
        raise ValueError(f"drop_connection must be true or false, got {drop!r}")
    fault.drop_connection = drop
    if drop and fault.error is not None:
        raise ValueError("a fault either answers with an error or drops the connection, not both")
    if not (fault.error is not None or drop or fault.delay_ms or fault.throttle_ms):
        raise ValueError("a fault needs an action: error, delay_ms, drop_connection or throttle_ms")
    topic, partition = spec.get("topic"), _whole(spec, "partition")
    if topic is not None or partition is not None:
        if fault.api_key not in PARTITIONED:
            raise ValueError("topic and partition narrow only Produce, Fetch and ListOffsets faults")
        if topic is None:
            raise ValueError("a partition needs its topic")
        if not isinstance(topic, str) or not topic:
            raise ValueError(f"topic must be a topic name, got {topic!r}")
    fault.topic, fault.partition = topic, partition
    return fault


class FaultTable:
    """The armed faults of one broker, in the order they were added (the first match wins)."""

    def __init__(self):
        self._faults: dict[int, Fault] = {}
        self._ids = itertools.count(1)
        self._connections: set[trio.CancelScope] = set()
        self._down_until: float | None = None

    def __bool__(self) -> bool:
        return bool(self._faults)

    # --- the table ------------------------------------------------------------------------

    def add(self, spec: dict) -> Fault:
        fault = parse_fault(spec, next(self._ids))
        if fault.api_key is None and not fault.append_fails:
            self._go_down(fault)
        else:
            self._faults[fault.id] = fault
        log.info("fault injected: %s", fault.describe())
        return fault

    def list(self) -> list[dict]:
        return [fault.describe() for fault in self._faults.values()]

    def remove(self, fault_id: int) -> bool:
        return self._faults.pop(fault_id, None) is not None

    def clear(self) -> int:
        count = len(self._faults)
        self._faults.clear()
        return count

    def check_append(self, topic: str, partition: int) -> None:
        """Raise StorageWriteFailed when an armed storage fault takes this append."""
        for fault in list(self._faults.values()):
            if fault.append_fails and fault.topic == topic and fault.partition in (None, partition):
                fault.fired += 1
                if fault.remaining is not None:
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        del self._faults[fault.id]
                raise StorageWriteFailed(f"injected fault {fault.id}: the disk refused the write to {topic}-{partition}")

    def _take(self, api_key: int, request, topic_names) -> tuple[Fault, list] | None:
        """The first fault matching this request, counted as fired, and the (topic, partition)
        pairs it covers ([] for the whole request)."""
        for fault in self._faults.values():
            if fault.api_key != api_key:
                continue
            covered = []
            if fault.topic is not None:
                covered = [tp for tp in _partitions(api_key, request, topic_names)
                           if tp[0] == fault.topic and fault.partition in (None, tp[1])]
                if not covered:
                    continue
            fault.fired += 1
            if fault.remaining is not None:
                fault.remaining -= 1
                if fault.remaining == 0:
                    del self._faults[fault.id]
            return fault, covered
        return None

    # --- dispatch -------------------------------------------------------------------------

    async def intercept(self, route, ctx, request):
        """Answer one request as the matching fault says, or by its handler if none matches."""
        api = route.api
        taken = self._take(api.key, request, lambda topic_id: _topic_name(ctx.broker, topic_id))
        if taken is None:
            return await route.handle(ctx, request)
        fault, covered = taken
        if fault.delay_ms:
            await trio.sleep(fault.delay_ms / 1000)
        if fault.drop_connection:
            raise ConnectionDropped(f"fault {fault.id} drops the connection before answering {api.name}")
        if fault.error is None:
            result = await route.handle(ctx, request)
        elif fault.topic is None:
            result = None if _no_response(api.key, request) else error_response(api, ctx.version, request, fault.error)
        else:
            result = await _partly_failed(route, ctx, request, covered, fault.error)
        if result is not None and fault.throttle_ms:
            result = _throttled(api, ctx.version, result, fault.throttle_ms)
        return result

    # --- broker-wide down -----------------------------------------------------------------

    def _go_down(self, fault: Fault) -> None:
        self._down_until = trio.current_time() + fault.down_ms / 1000
        for scope in list(self._connections):
            scope.cancel()
        fault.fired = 1
        fault.remaining = 0

    def is_down(self) -> bool:
        if self._down_until is None:
            return False
        if trio.current_time() >= self._down_until:
            self._down_until = None
            log.info("broker is up again after an injected down time")
            return False
        return True

    def come_up(self) -> bool:
        """End an injected down now (the nemesis healing); whether one was in force."""
        was_down = self.is_down()
        self._down_until = None
        return was_down

    def down_remaining_ms(self) -> int:
        return max(int((self._down_until - trio.current_time()) * 1000), 0) if self.is_down() else 0

    @contextlib.contextmanager
    def connection(self):
        """Wrap one connection's life, so "down" can close it."""
        with trio.CancelScope() as scope:
            self._connections.add(scope)
            try:
                yield
            finally:
                self._connections.discard(scope)


def _throttled(api, version: int, result, throttle_ms: int):
    """The answer with its throttle_time_ms set (a pre-encoded answer is decoded first)."""
    if not isinstance(result, dict):  # sending.EncodedBody: a cached Metadata answer
        result = api.response.parse(result.body, version)
    if "throttle_time_ms" in result:
        result["throttle_time_ms"] = throttle_ms
    return result


def _no_response(api_key: int, request) -> bool:
    return api_key == PRODUCE and request.get("acks") == 0


def _topic_name(broker, topic_id) -> str | None:
    for name, metadata in broker.logs.topics.items():
        if metadata.topic_id == topic_id:
            return name
    return None


def _request_topic(topic, topic_names) -> str | None:
    name = topic.get("name", topic.get("topic"))
    if not name and topic.get("topic_id") is not None:
        name = topic_names(topic["topic_id"])
    return name


def _partitions(api_key: int, request, topic_names) -> list[tuple[str, int]]:
    shape = PARTITIONED[api_key]
    return [
        (_request_topic(topic, topic_names), p[shape.request_partition])
        for topic in request.get(shape.request_topics) or []
        for p in topic.get(shape.request_partitions) or []
    ]


def _split(shape: _Partitioned, request, covered: set, topic_names):
    """The request without the covered partitions, and a request of only those."""
    kept_topics, failed_topics = [], []
    for topic in request.get(shape.request_topics) or []:
        name = _request_topic(topic, topic_names)
        kept, failed = [], []
        for p in topic.get(shape.request_partitions) or []:
            (failed if (name, p[shape.request_partition]) in covered else kept).append(p)
        for bucket, topics in ((kept, kept_topics), (failed, failed_topics)):
            if bucket:
                copy = type(topic)(topic)
                copy[shape.request_partitions] = bucket
                topics.append(copy)
    kept_request, failed_request = type(request)(request), type(request)(request)
    kept_request[shape.request_topics] = kept_topics
    failed_request[shape.request_topics] = failed_topics
    return kept_request, failed_request


async def _partly_failed(route, ctx, request, covered: list, error: ErrorCode):
    """Covered partitions answer with the error; the rest of the request is served as usual."""
    api, shape = route.api, PARTITIONED[route.api.key]
    names = lambda topic_id: _topic_name(ctx.broker, topic_id)  # noqa: E731
    kept, failed = _split(shape, request, set(covered), names)
    failed_response = error_response(api, ctx.version, failed, error)
    if not kept[shape.request_topics]:
        return None if _no_response(api.key, request) else failed_response
    result = await route.handle(ctx, kept)
    if result is None:
        return None
    for failed_topic in failed_response[shape.response_topics]:
        key = {k: failed_topic[k] for k in ("name", "topic", "topic_id") if k in failed_topic}
        same = next((t for t in result[shape.response_topics] if all(t.get(k) == v for k, v in key.items())), None)
        if same is None:
            result[shape.response_topics].append(failed_topic)
        else:
            same[shape.response_partitions] = list(same[shape.response_partitions]) + failed_topic[shape.response_partitions]
    return result
