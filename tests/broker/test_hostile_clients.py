"""Clients that misbehave without sending bad bytes: one that never reads its answers, one that
opens a thousand connections, one that sends a byte at a time. The broker's memory stays bounded
and a well-behaved client beside them is served as usual (checked by doing its work within a
generous bound, not by timing it)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from testkit.process import rss_mb
from trafka.testing.rawwire import RawClient
from tests.broker.test_produce_fetch_wire import FETCH_V, batch, create, fetch_body, partition_of, produce_body


def _well_behaved_round_trip(bootstrap: str, topic: str, tag: bytes) -> None:
    with RawClient(bootstrap, "polite") as client:
        client.sock.settimeout(10)
        answer = client.request(0, 8, produce_body(topic, batch(tag)))
        offset = answer.responses[0].partition_responses[0].base_offset
        assert answer.responses[0].partition_responses[0].error_code == 0
        part = partition_of(client.request(1, FETCH_V, fetch_body(topic, offset)))
        assert part.error_code == 0 and tag in part.records


@pytest.fixture
def loaded(trafka_broker):
    """A topic holding ~8 MB, for fetches that do not fit a socket buffer."""
    with RawClient(trafka_broker.bootstrap_servers, "loader") as client:
        assert create(client, "big").error_code == 0
        assert create(client, "polite").error_code == 0
        chunk = batch(*[b"x" * 1000] * 1000)
        for _ in range(8):
            assert client.request(0, 8, produce_body("big", chunk)).responses[0].partition_responses[0].error_code == 0
    return trafka_broker


def test_a_consumer_that_never_reads_costs_no_memory_and_blocks_nobody(loaded):
    before = rss_mb(loaded)
    stalled = []
    for _ in range(10):
        s = socket.create_connection(("127.0.0.1", loaded.port))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        with RawClient(loaded.bootstrap_servers) as framer:
            body = fetch_body("big", 0)
            body["max_bytes"] = body["topics"][0]["partitions"][0]["partition_max_bytes"] = 50 << 20
            frame = framer.frame(1, FETCH_V, body)
        s.sendall(frame * 20)  # 20 fetches of ~8 MB each, never read
        stalled.append(s)
    time.sleep(1)
    _well_behaved_round_trip(loaded.bootstrap_servers, "polite", b"still-served")
    # ~1.6 GB of answers are owed; what the broker holds for them stays small (sendfile).
    assert rss_mb(loaded) - before < 60
    for s in stalled:
        s.close()
    _well_behaved_round_trip(loaded.bootstrap_servers, "polite", b"after-close")


def test_a_thousand_connections_from_one_client(trafka_broker):
    with RawClient(trafka_broker.bootstrap_servers, "setup") as client:
        assert create(client, "polite").error_code == 0
        api_versions = client.frame(18, 0, {})
    before = rss_mb(trafka_broker)
    socks = []
    try:
        for _ in range(1000):
            s = socket.create_connection(("127.0.0.1", trafka_broker.port), timeout=10)
            s.sendall(api_versions)
            socks.append(s)
        for s in socks:
            size = int.from_bytes(s.recv(4, socket.MSG_WAITALL), "big")
            assert len(s.recv(size, socket.MSG_WAITALL)) == size
        _well_behaved_round_trip(trafka_broker.bootstrap_servers, "polite", b"beside-1000")
        assert rss_mb(trafka_broker) - before < 80  # tens of KB per connection
    finally:
        for s in socks:
            s.close()
    _well_behaved_round_trip(trafka_broker.bootstrap_servers, "polite", b"after-1000")


def test_a_client_sending_a_byte_at_a_time(trafka_broker):
    with RawClient(trafka_broker.bootstrap_servers, "setup") as client:
        assert create(client, "polite").error_code == 0
        frame = client.frame(0, 8, produce_body("polite", batch(b"dripped")))
    huge_declared = (100 << 20).to_bytes(4, "big")  # a frame declared at the 100 MB limit
    drips = [socket.create_connection(("127.0.0.1", trafka_broker.port)) for _ in range(2)]
    stop = threading.Event()

    def drip(sock, data):
        for i in range(len(data)):
            if stop.is_set():
                return
            sock.sendall(data[i : i + 1])
            time.sleep(0.02)

    before = rss_mb(trafka_broker)
    threads = [threading.Thread(target=drip, args=(drips[0], frame), daemon=True),
               threading.Thread(target=drip, args=(drips[1], huge_declared + b"\0" * 200), daemon=True)]
    for t in threads:
        t.start()
    try:
        for i in range(3):
            _well_behaved_round_trip(trafka_broker.bootstrap_servers, "polite", b"beside-drip-%d" % i)
            time.sleep(0.3)
        assert rss_mb(trafka_broker) - before < 20  # no buffer at the declared size
        threads[0].join(timeout=len(frame) * 0.05 + 10)
        # The dripped request is answered like any other once its last byte is in.
        drips[0].settimeout(10)
        size = int.from_bytes(drips[0].recv(4, socket.MSG_WAITALL), "big")
        assert size > 0 and len(drips[0].recv(size, socket.MSG_WAITALL)) == size
    finally:
        stop.set()
        for s in drips:
            s.close()


@pytest.mark.trafka_config({"queued.max.request.bytes": str(8 << 20)})
def test_half_sent_large_frames_are_bounded_broker_wide(trafka_broker):
    """Thirty connections each declare a 16 MB frame and send part of it: past
    queued.max.request.bytes the broker stops reading them, so its memory does not grow with the
    number of such connections, and a well-behaved client's small requests go on."""
    with RawClient(trafka_broker.bootstrap_servers, "setup") as client:
        assert create(client, "polite").error_code == 0
    before = rss_mb(trafka_broker)
    hogs = []
    try:
        for _ in range(30):
            s = socket.create_connection(("127.0.0.1", trafka_broker.port))
            s.setblocking(False)
            s.send((16 << 20).to_bytes(4, "big"))
            hogs.append(s)
        deadline = time.monotonic() + 4
        chunk = b"\0" * (1 << 20)
        sent = [0] * len(hogs)
        while time.monotonic() < deadline:  # push as much as the broker takes, never a whole frame
            for i, s in enumerate(hogs):
                if sent[i] + len(chunk) < 15 << 20:
                    try:
                        sent[i] += s.send(chunk)
                    except BlockingIOError:
                        pass
            time.sleep(0.01)
        _well_behaved_round_trip(trafka_broker.bootstrap_servers, "polite", b"beside-hogs")
        # One frame may use the pool fully (8 MB) plus what sits in socket buffers; not 30 x 16 MB.
        assert rss_mb(trafka_broker) - before < 100
    finally:
        for s in hogs:
            s.close()
    _well_behaved_round_trip(trafka_broker.bootstrap_servers, "polite", b"after-hogs")
