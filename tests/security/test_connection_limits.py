"""What an unauthenticated or greedy client may cost, bounded with Kafka's limits: frames before
SASL completes (sasl.server.max.receive.size), connections per address (max.connections.per.ip
and its overrides), all connections (max.connections), idle and half-authenticated connections
(connections.max.idle.ms, sasl.handshake.timeout.ms), and one log line per limit and address
however hard a client pushes. Raw sockets against a broker process; a real client beside them."""

from __future__ import annotations

import socket
import struct
import time

import pytest

from testkit.security import PLAIN_JAAS, Auth, roundtrip_kafka_python
from trafka.testing import TrafkaBroker
from testkit.process import rss_mb
from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_for_log, wait_until

LISTENERS = {
    "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
    "sasl.jaas.config": PLAIN_JAAS,
    "sasl.enabled.mechanisms": "PLAIN",
}


def _closed_by_broker(sock: socket.socket, timeout: float = 10) -> bool:
    """True once the broker has closed the socket (EOF or reset), False if it stays open."""
    sock.settimeout(timeout)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def _connect_from(address: str, host: str, port: int) -> socket.socket:
    sock = socket.socket()
    sock.bind((address, 0))
    sock.connect((host, port))
    return sock


def _address(broker, listener: str) -> tuple[str, int]:
    host, port = broker.bootstrap(listener).rsplit(":", 1)
    return host, int(port)


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    broker = TrafkaBroker(data_dir=tmp_path_factory.mktemp("limits") / "data", config={
        **LISTENERS,
        "max.connections.per.ip": "40",
        "max.connections.per.ip.overrides": "127.0.0.2:3",
    })
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def test_a_large_frame_before_authentication_is_refused_at_its_size(limited):
    sock = socket.create_connection(_address(limited, "SASL_PLAINTEXT"))
    sock.sendall(struct.pack(">i", 524289) + b"\x00\x12\x00\x00")  # one byte over the default
    assert _closed_by_broker(sock)
    log = wait_for_log(limited, "sasl.server.max.receive.size")
    assert "declared frame size 524289 is over sasl.server.max.receive.size (524288)" in log
    sock.close()
    # At the limit the frame is read (and, not being a request the broker can parse before
    # login, closed for what it is, not for its size).
    roundtrip_kafka_python(limited.bootstrap("SASL_PLAINTEXT"),
                           Auth("SASL_PLAINTEXT", mechanism="PLAIN", user="alice", password="alice-secret"))


def test_unauthenticated_clients_announcing_90_mb_frames_cost_less_than_a_few_mb(limited):
    with RawClient(limited.bootstrap("PLAINTEXT"), "warm") as client:  # let the broker settle first
        client.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
    before = rss_mb(limited)
    socks = []
    for _ in range(20):
        sock = socket.create_connection(_address(limited, "SASL_PLAINTEXT"))
        sock.sendall(struct.pack(">i", 90 << 20))
        try:
            sock.sendall(b"\x00" * (4 << 20))  # the broker closes before reading this far
        except (ConnectionResetError, BrokenPipeError):
            pass
        socks.append(sock)
    for sock in socks:
        assert _closed_by_broker(sock)
        sock.close()
    assert rss_mb(limited) - before < 8


def test_the_frame_limit_grows_to_socket_request_max_bytes_after_login(limited):
    """An authenticated kafka-python producer sends a 900 KB record on the SASL listener."""
    from kafka import KafkaConsumer, KafkaProducer

    settings = dict(bootstrap_servers=limited.bootstrap("SASL_PLAINTEXT"), security_protocol="SASL_PLAINTEXT",
                    sasl_mechanism="PLAIN", sasl_plain_username="alice", sasl_plain_password="alice-secret")
    producer = KafkaProducer(max_request_size=2 << 20, **settings)
    producer.send("big-after-login", b"v" * 900_000).get(timeout=30)
    producer.close()
    consumer = KafkaConsumer("big-after-login", auto_offset_reset="earliest", consumer_timeout_ms=10_000,
                             fetch_max_bytes=4 << 20, max_partition_fetch_bytes=4 << 20, **settings)
    record = next(consumer, None)  # the one record, or None after 10 s without it
    consumer.close()
    assert record is not None and record.value == b"v" * 900_000


def test_connections_per_address_are_capped_with_overrides(limited):
    host, port = _address(limited, "PLAINTEXT")
    kept = []
    try:
        kept += [_connect_from("127.0.0.2", host, port) for _ in range(3)]
        extra = _connect_from("127.0.0.2", host, port)
        assert _closed_by_broker(extra)  # the fourth from 127.0.0.2 (override: 3)
        extra.close()
        for sock in kept:  # the three admitted stay open and are served
            assert not _closed_by_broker(sock, timeout=0.2)
        log = wait_for_log(limited, "max.connections.per.ip: closing a new connection from 127.0.0.2")
        assert "it has 3 open already" in log
        # 127.0.0.1 has its own count (40): a real client is served meanwhile
        roundtrip_kafka_python(limited.bootstrap("PLAINTEXT"), Auth("PLAINTEXT"))
    finally:
        for sock in kept:
            sock.close()
    # a closed connection frees its place
    def admitted():
        sock = _connect_from("127.0.0.2", host, port)
        open_ = not _closed_by_broker(sock, timeout=0.3)
        sock.close()
        return open_
    wait_until(admitted, 10, "a connection from 127.0.0.2 admitted again")


def test_a_limit_hammered_logs_one_line_per_interval(limited):
    host, port = _address(limited, "PLAINTEXT")
    kept = []
    try:
        kept += [_connect_from("127.0.0.2", host, port) for _ in range(3)]
        wait_until(lambda: all(not _closed_by_broker(s, timeout=0.05) for s in kept), 10, "three admitted")
        lines_before = limited.log_text().count("max.connections.per.ip: closing a new connection from 127.0.0.2")
        for _ in range(200):
            extra = _connect_from("127.0.0.2", host, port)
            assert _closed_by_broker(extra)
            extra.close()
        lines_after = limited.log_text().count("max.connections.per.ip: closing a new connection from 127.0.0.2")
        assert lines_after - lines_before <= 1  # at most one line a minute for this address
    finally:
        for sock in kept:
            sock.close()


def test_max_connections_holds_new_connections_until_one_closes(tmp_path):
    broker = TrafkaBroker(data_dir=tmp_path / "data", config={"max.connections": "2"}).start()
    try:
        first = RawClient(broker.bootstrap_servers, "first")
        second = RawClient(broker.bootstrap_servers, "second")
        for client in (first, second):
            client.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
        waiting = socket.create_connection(("127.0.0.1", broker.port))
        with RawClient(broker.bootstrap_servers) as framer:
            waiting.sendall(framer.frame(18, 0, {}))
        waiting.settimeout(0.5)
        with pytest.raises(socket.timeout):  # accepted by the kernel, not read by the broker
            waiting.recv(100)
        wait_for_log(broker, "max.connections: the broker has 2 connections open")
        first.close()
        waiting.settimeout(10)
        assert waiting.recv(100)  # answered once a place is free
        waiting.close()
        second.close()
    finally:
        broker.stop()


def test_idle_and_half_authenticated_connections_are_closed(tmp_path):
    broker = TrafkaBroker(data_dir=tmp_path / "data", config={
        **LISTENERS, "connections.max.idle.ms": "400", "sasl.handshake.timeout.ms": "1500"}).start()
    try:
        idle = socket.create_connection(_address(broker, "PLAINTEXT"))
        assert _closed_by_broker(idle)
        wait_for_log(broker, "connections.max.idle.ms: closing the connection from 127.0.0.1")
        idle.close()
        # A client that keeps asking ApiVersions on the SASL listener is never idle, but never
        # logs in either: closed after sasl.handshake.timeout.ms.
        busy = RawClient(broker.bootstrap("SASL_PLAINTEXT"), "never-logs-in")
        started = time.monotonic()
        with pytest.raises((ConnectionError, OSError, EOFError)):
            while time.monotonic() - started < 30:
                busy.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
                time.sleep(0.1)
        wait_for_log(broker, "sasl.handshake.timeout.ms: closing the connection from 127.0.0.1")
        busy.close()
        # A logged-in client that stays busy keeps its connection.
        roundtrip_kafka_python(broker.bootstrap("SASL_PLAINTEXT"),
                               Auth("SASL_PLAINTEXT", mechanism="PLAIN", user="alice", password="alice-secret"))
    finally:
        broker.stop()


def test_bad_limit_settings_stop_the_start(tmp_path):
    from trafka.broker.config import BrokerConfig, ConfigError

    with pytest.raises(ConfigError, match="max.connections.per.ip.overrides: '127.0.0.1' is not host:count"):
        BrokerConfig({"max.connections.per.ip.overrides": "127.0.0.1"})
    with pytest.raises(ConfigError, match="max.connections: must be at least 0"):
        BrokerConfig({"max.connections": "-1"})


def test_connection_creation_beyond_the_rate_is_delayed_not_refused(tmp_path):
    """max.connection.creation.rate=5: twenty connections opened at once are all served, the
    ones past the rate after a delay, with one log line for the address."""
    broker = TrafkaBroker(data_dir=tmp_path / "data", config={"max.connection.creation.rate": "5"}).start()
    try:
        clients = [RawClient(broker.bootstrap_servers, f"burst-{i}") for i in range(20)]
        for client in clients:
            client.sock.settimeout(30)
            assert client.request(18, 3, {"client_software_name": "t", "client_software_version": "1"}).error_code == 0
        log = wait_for_log(broker, "max.connection.creation.rate: more than 5 new connections per second")
        assert log.count("max.connection.creation.rate:") == 1
        for client in clients:
            client.close()
    finally:
        broker.stop()
