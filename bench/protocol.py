"""Workloads that talk the Kafka protocol directly, so the broker (not a client library) is measured.

- small Produce / Metadata requests: 16 connections, 8 requests pipelined on each, one 100 B
  record per Produce (acks=1), one topic per Metadata;
- a 64 KB Fetch of a log of tiny batches against one of a single 64 KB batch;
- 5,000 partitions: create 500 topics x 10 partitions, full Metadata, restart, RSS, one record
  on every partition, restart again (the clean close then fsyncs 5,000 logs and the start
  loads them);
- 1,000 idle connections: the broker's CPU while they are open and silent.

Every loop is bounded by a count and a deadline; only 127.0.0.1 is used. The client is a plain
selector loop over pre-encoded frames so that it costs little next to the broker under test.
"""

from __future__ import annotations

import selectors
import socket
import time
import uuid

from trafka.testing.rawwire import RawClient
from trafka.wire import framing
from trafka.wire import records as rec
from trafka.wire.messages import APIS

DEADLINE_SECONDS = 60

PRODUCE_VERSION = 7  # no tagged fields; served by every broker compared
METADATA_VERSION = 9
FETCH_VERSION = 11
CREATE_TOPICS_VERSION = 4


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _connect(port: int) -> RawClient:
    return RawClient(f"127.0.0.1:{port}", "bench", timeout=30)


def _answer(conn: RawClient, key: int, version: int, body: dict) -> bytes:
    """The response frame, undecoded: what a timing should include is the broker's work."""
    conn.send(conn.frame(key, version, body))
    return conn.read_frame()


def create_topics(port: int, names: list[str], partitions: int) -> float:
    """CreateTopics in one request; returns the seconds the broker took to answer."""
    conn = _connect(port)
    try:
        body = {
            "topics": [
                {"name": n, "num_partitions": partitions, "replication_factor": 1, "assignments": [], "configs": []}
                for n in names
            ],
            "timeout_ms": 60_000,
            "validate_only": False,
        }
        started = time.perf_counter()
        answer = conn.request(19, CREATE_TOPICS_VERSION, body)
        took = time.perf_counter() - started
        bad = [t for t in answer.topics if t.error_code not in (0, 36)]
        if bad:
            raise RuntimeError(f"CreateTopics failed: {bad[:3]}")
        # Wait until every topic is visible (some brokers create asynchronously).
        deadline = time.monotonic() + DEADLINE_SECONDS
        wanted = set(names)
        while time.monotonic() < deadline:
            meta = conn.request(3, METADATA_VERSION, {"topics": None, "allow_auto_topic_creation": False,
                                                       "include_cluster_authorized_operations": False,
                                                       "include_topic_authorized_operations": False})
            seen = {t.name for t in meta.topics if t.error_code == 0 and len(t.partitions) == partitions}
            if wanted <= seen:
                return took
            time.sleep(0.05)
        raise RuntimeError("topics did not appear")
    finally:
        conn.close()


def _one_record_batch(size: int) -> bytes:
    return rec.encode_batch([rec.Record(None, b"x" * size, timestamp=int(time.time() * 1000))])


def _produce_frame(topic: str, batch: bytes, correlation: int) -> bytes:
    body = {
        "transactional_id": None, "acks": 1, "timeout_ms": 30_000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}],
    }
    return framing.encode_request(APIS[0], PRODUCE_VERSION, correlation, "bench", body)


def _metadata_frame(topic: str, correlation: int) -> bytes:
    body = {"topics": [{"name": topic}], "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False}
    return framing.encode_request(APIS[3], METADATA_VERSION, correlation, "bench", body)


def _pipelined(port: int, frame: bytes, connections: int, depth: int, seconds: float) -> float:
    """Requests per second with `connections` sockets, each keeping `depth` requests in flight."""
    selector = selectors.DefaultSelector()
    socks = []
    state = {}
    for _ in range(connections):
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setblocking(False)
        socks.append(s)
        state[s] = [bytearray(), 0]  # receive buffer, responses outstanding
        selector.register(s, selectors.EVENT_READ)
    window = frame * depth
    done = 0
    try:
        for s in socks:
            s.sendall(window)  # small enough for the socket buffer
            state[s][1] = depth
        started = time.perf_counter()
        end = started + seconds
        while True:
            now = time.perf_counter()
            if now >= end:
                break
            for key, _ in selector.select(timeout=1.0):
                s = key.fileobj
                buf, outstanding = state[s]
                data = s.recv(1 << 20)
                if not data:
                    raise ConnectionError("broker closed a benchmark connection")
                buf += data
                answered = 0
                pos = 0
                while len(buf) - pos >= 4:
                    (size,) = framing.SIZE.unpack_from(buf, pos)
                    if len(buf) - pos < 4 + size:
                        break
                    pos += 4 + size
                    answered += 1
                del buf[:pos]
                if answered:
                    done += answered
                    s.sendall(frame * answered)  # refill the window
        elapsed = time.perf_counter() - started
        return done / elapsed
    finally:
        for s in socks:
            selector.unregister(s)
            s.close()
        selector.close()


def small_requests(broker, seconds: float = 5.0, connections: int = 16, depth: int = 8) -> dict:
    topic = _name("small")
    create_topics(broker.port, [topic], 1)
    produce = _produce_frame(topic, _one_record_batch(100), 1)
    metadata = _metadata_frame(topic, 1)
    _pipelined(broker.port, produce, connections, depth, 0.5)  # warm-up
    cpu = broker.cpu_seconds()
    produce_rate = _pipelined(broker.port, produce, connections, depth, seconds)
    produce_cpu = broker.cpu_seconds() - cpu
    cpu = broker.cpu_seconds()
    metadata_rate = _pipelined(broker.port, metadata, connections, depth, seconds)
    metadata_cpu = broker.cpu_seconds() - cpu
    return {
        "produce_req_per_s": produce_rate,
        "produce_broker_cpu_us_per_req": produce_cpu / max(produce_rate * seconds, 1) * 1e6,
        "metadata_req_per_s": metadata_rate,
        "metadata_broker_cpu_us_per_req": metadata_cpu / max(metadata_rate * seconds, 1) * 1e6,
    }


def _fetch_ms(conn: RawClient, topic: str, max_bytes: int, rounds: int) -> tuple[float, int]:
    body = {
        "replica_id": -1, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": max_bytes, "isolation_level": 0,
        "session_id": 0, "session_epoch": -1,
        "topics": [{"topic": topic, "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                                    "log_start_offset": -1, "partition_max_bytes": max_bytes}]}],
        "forgotten_topics_data": [], "rack_id": "",
    }
    frame = framing.encode_request(APIS[1], FETCH_VERSION, 1, "bench", body)
    size = 0
    best = []
    for _ in range(rounds):
        started = time.perf_counter()
        conn.send(frame)
        size = len(conn.read_frame())
        best.append(time.perf_counter() - started)
    best.sort()
    return best[len(best) // 2] * 1000, size  # the median: the machine is shared


def fetch_tiny_batches(broker, rounds: int = 200, total: int = 64 * 1024) -> dict:
    """A 64 KB fetch of a log of ~100 B batches against a 64 KB fetch of one batch."""
    tiny, big = _name("tiny"), _name("big")
    create_topics(broker.port, [tiny, big], 1)
    conn = _connect(broker.port)
    try:
        batch = _one_record_batch(100)
        for i in range(total // len(batch) + 20):
            conn.send(_produce_frame(tiny, batch, i))
        for _ in range(total // len(batch) + 20):
            conn.read_frame()
        records = [rec.Record(None, b"y" * 100, timestamp=int(time.time() * 1000)) for _ in range(total // 110)]
        conn.send(_produce_frame(big, rec.encode_batch(records), 1))
        conn.read_frame()
        tiny_ms, tiny_size = _fetch_ms(conn, tiny, total, rounds)
        big_ms, big_size = _fetch_ms(conn, big, total, rounds)
    finally:
        conn.close()
    return {
        "tiny_batches_fetch_ms": tiny_ms,
        "one_batch_fetch_ms": big_ms,
        "tiny_over_one_batch": tiny_ms / big_ms,
        "tiny_response_kb": tiny_size / 1024,
    }


def many_partitions(broker, topics: int = 500, partitions: int = 10) -> dict:
    names = [_name(f"p{i}") for i in range(topics)]
    created = create_topics(broker.port, names, partitions)
    conn = _connect(broker.port)
    body = {"topics": None, "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False}
    try:
        # A topic created now invalidates whatever the broker cached; time the first answer.
        conn.request(19, CREATE_TOPICS_VERSION, {"topics": [{"name": _name("p-last"), "num_partitions": 1,
            "replication_factor": 1, "assignments": [], "configs": []}], "timeout_ms": 60_000, "validate_only": False})
        started = time.perf_counter()
        _answer(conn, 3, METADATA_VERSION, body)
        first = time.perf_counter() - started
        timings = []
        for _ in range(20):
            started = time.perf_counter()
            _answer(conn, 3, METADATA_VERSION, body)
            timings.append(time.perf_counter() - started)
    finally:
        conn.close()
    timings.sort()
    result = {
        "create_5000_partitions_s": created,
        # The first answer after a change is built and encoded; the rest may come from a cache.
        "full_metadata_first_ms": first * 1000,
        "full_metadata_ms": timings[len(timings) // 2] * 1000,
        "rss_mb": broker.rss_mb(),
    }
    restart = getattr(broker, "restart", None)
    if restart is not None and getattr(broker, "restartable", False):
        result["restart_s"] = restart()  # never-written partitions
        result["rss_after_restart_mb"] = broker.rss_mb()
    # One 100 B record on every partition, then a restart that must load 5,000 written logs.
    started = time.perf_counter()
    _produce_everywhere(broker.port, names, partitions)
    result["produce_to_5000_partitions_s"] = time.perf_counter() - started
    if restart is not None and getattr(broker, "restartable", False):
        result["restart_with_data_s"] = restart()
        result["stop_with_data_s"] = broker.last_stop_s
        result["rss_after_restart_with_data_mb"] = broker.rss_mb()
    return result


def _produce_everywhere(port: int, names: list[str], partitions: int) -> None:
    """One Produce (acks=1) per 50 topics, each with one 100 B record for every partition."""
    batch = _one_record_batch(100)
    conn = _connect(port)
    try:
        for i in range(0, len(names), 50):
            answer = conn.request(0, PRODUCE_VERSION, {"transactional_id": None, "acks": 1, "timeout_ms": 30_000,
                "topic_data": [{"name": name, "partition_data": [{"index": p, "records": batch}
                                                                 for p in range(partitions)]}
                               for name in names[i : i + 50]]})
            errors = {p.error_code for t in answer.responses for p in t.partition_responses}
            if errors != {0}:
                raise RuntimeError(f"produce to every partition answered error codes {sorted(errors)}")
    finally:
        conn.close()


def idle_connections(broker, count: int = 1000, seconds: float = 5.0) -> dict:
    """Open `count` connections, send one ApiVersions on each, then leave them silent."""
    clients = []
    try:
        for _ in range(count):
            client = RawClient(f"127.0.0.1:{broker.port}", "bench", timeout=10)
            client.send(client.frame(18, 0, {}))
            clients.append(client)
        for client in clients:
            client.read_frame()
        time.sleep(0.5)
        cpu = broker.cpu_seconds()
        time.sleep(seconds)
        used = broker.cpu_seconds() - cpu
        return {"idle_cpu_percent": used / seconds * 100, "rss_with_1000_connections_mb": broker.rss_mb()}
    finally:
        for client in clients:
            client.close()
        # Let the broker finish closing them (~0.1 ms of trio teardown each) before the next
        # workload starts timing: 5,000 partitions' CreateTopics took 0.23 s instead of 0.06 s
        # when it ran into the teardown of these 1,000 connections.
        time.sleep(1.0)
