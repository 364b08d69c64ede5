"""Bad bytes close only the offending connection, with a log line; others keep working."""

from __future__ import annotations

import socket
import struct

import pytest
from kafka import KafkaProducer

from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_for_log
from trafka.wire import framing
from trafka.wire.messages import APIS


def assert_broker_healthy(broker) -> None:
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    producer.send("health", b"ok").get(timeout=10)
    producer.close()


@pytest.fixture(scope="module")
def broker():
    from trafka.testing import TrafkaBroker

    with TrafkaBroker() as b:
        yield b


def test_garbage_bytes(broker):
    client = RawClient(broker.bootstrap_servers)
    client.send(struct.pack(">i", 12) + b"\xde\xad\xbe\xef" * 3)
    assert client.closed_by_broker()
    assert_broker_healthy(broker)


def test_huge_declared_frame_size(broker):
    client = RawClient(broker.bootstrap_servers)
    client.send(struct.pack(">i", 0x7FFFFFF0))
    assert client.closed_by_broker()
    wait_for_log(broker, "declared frame size 2147483632")
    assert_broker_healthy(broker)


def test_negative_frame_size(broker):
    client = RawClient(broker.bootstrap_servers)
    client.send(struct.pack(">i", -5))
    assert client.closed_by_broker()
    assert_broker_healthy(broker)


def test_truncated_frame(broker):
    client = RawClient(broker.bootstrap_servers)
    client.send(struct.pack(">i", 100) + b"\x00\x12\x00\x00")
    client.sock.shutdown(socket.SHUT_WR)
    assert client.closed_by_broker()
    wait_for_log(broker, "connection closed inside a frame")
    assert_broker_healthy(broker)


def test_truncated_body(broker):
    frame = framing.encode_request(APIS[3], 4, 7, "truncator", {"topics": [{"name": "abc"}], "allow_auto_topic_creation": False})
    # Keep the header, cut the body short, and fix the size so the frame itself is whole.
    cut = frame[4:-6]
    client = RawClient(broker.bootstrap_servers)
    client.send(struct.pack(">i", len(cut)) + cut)
    assert client.closed_by_broker()
    wait_for_log(broker, "truncator")
    assert_broker_healthy(broker)


@pytest.mark.parametrize(
    ("api_key", "version", "logged"),
    [(999, 0, "unknown API key 999"), (3, 99, "Metadata v99 is not served"),
     # Streams groups (KIP-1071) as a Kafka 4.3 broker without the streams feature: not
     # advertised, and a request for them closes the connection (Kafka's isApiEnabled check).
     (88, 0, "unknown API key 88"), (89, 0, "unknown API key 89")],
    ids=["unknown-api-key", "unknown-version", "streams-group-heartbeat", "streams-group-describe"],
)
def test_unknown_api_key_or_version(broker, api_key, version, logged):
    client = RawClient(broker.bootstrap_servers)
    header = struct.pack(">hhih", api_key, version, 1, 4) + b"oops"
    client.send(struct.pack(">i", len(header)) + header)
    assert client.closed_by_broker()
    wait_for_log(broker, logged)
    assert_broker_healthy(broker)


def test_too_new_api_versions_gets_error_35_and_v0_body(broker):
    client = RawClient(broker.bootstrap_servers)
    header = struct.pack(">hhih", 18, 5, 42, 3) + b"new" + b"\x00"  # v4 is served (Kafka 4.x); v5 is not
    body = b"\x05trafk\x02x\x00"
    client.send(struct.pack(">i", len(header + body)) + header + body)
    correlation_id, response = client.receive(18, 0)
    assert correlation_id == 42
    assert response.error_code == 35
    keys = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert keys[18] == (0, 4)
    assert keys[0][0] == 0
    # The connection stays usable: ask again at v3.
    client.send(framing.encode_request(APIS[18], 3, 43, "probe", {"client_software_name": "t", "client_software_version": "1"}))
    correlation_id, response = client.receive(18, 3)
    assert (correlation_id, response.error_code) == (43, 0)
    client.close()


def test_pipelined_requests_are_answered_in_order(broker):
    client = RawClient(broker.bootstrap_servers)
    frames = b"".join(
        framing.encode_request(APIS[18], v % 4, 100 + v, "pipeline", {"client_software_name": "t", "client_software_version": "1"})
        for v in range(20)
    )
    client.send(frames)
    for v in range(20):
        correlation_id, response = client.receive(18, v % 4)
        assert correlation_id == 100 + v
    client.close()
