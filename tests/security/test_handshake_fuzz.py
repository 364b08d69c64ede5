"""A bounded, seeded fuzz of what an unauthenticated client sends first: recorded SASL handshakes
(ApiVersions, SaslHandshake, SaslAuthenticate with PLAIN, SCRAM-SHA-256 and OAUTHBEARER tokens)
inside TLS on the SASL_SSL listener, and recorded TLS ClientHellos to the SASL_SSL and mTLS
listeners, each mutated (bytes flipped, cut, repeated, lengths changed) and sent on a connection
of its own. The broker writes no traceback, its memory stays bounded, and a healthy client is
served afterwards."""

from __future__ import annotations

import random
import socket
import ssl
import struct
import time
from pathlib import Path

import pytest

from testkit.oauth_tokens import claims_for, oauthbearer_message, unsecured_jwt, wall_clock_ms
from testkit.security import Auth, roundtrip_kafka_python
from testkit.process import rss_mb
from trafka.testing.rawwire import RawClient

SEED = 20261124
ROUNDS = 150  # per kind; the whole file takes seconds
MAX_SECONDS = 30  # a bound on the fuzzing loops, whatever the machine


def _sasl_handshakes() -> list[list[bytes]]:
    """Each mechanism's opening frames, as a client sends them before it is authenticated."""
    framer = RawClient.__new__(RawClient)
    framer.client_id, framer.correlation_id = "fuzz", 0
    token = unsecured_jwt(claims_for("alice", wall_clock_ms()))
    tokens = {
        "PLAIN": b"\0bob\0bob-secret",
        "SCRAM-SHA-256": b"n,,n=bob,r=fyko+d2lbbFgONRv9qkxdawL",
        "OAUTHBEARER": oauthbearer_message(token),
    }
    return [[framer.frame(18, 3, {"client_software_name": "fuzz", "client_software_version": "1"}),
             framer.frame(17, 1, {"mechanism": mechanism}),
             framer.frame(36, 2, {"auth_bytes": auth_bytes})] for mechanism, auth_bytes in tokens.items()]


def _client_hello(ca: Path) -> bytes:
    context = ssl.create_default_context(cafile=str(ca))
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


def _mutate(rng: random.Random, data: bytes) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(6)
        at = rng.randrange(len(data)) if data else 0
        if kind == 0 and data:  # flip a byte
            data[at] ^= 1 << rng.randrange(8)
        elif kind == 1:  # cut
            del data[at:]
        elif kind == 2:  # repeat a run
            data[at:at] = data[at:at + rng.randint(1, 64)] * rng.randint(1, 8)
        elif kind == 3 and len(data) >= at + 4:  # a length field made huge, negative or zero
            data[at:at + 4] = struct.pack(">i", rng.choice([0, -1, 2**31 - 1, 524289, rng.randrange(2**31)]))
        elif kind == 4:  # random bytes inserted
            data[at:at] = rng.randbytes(rng.randint(1, 32))
        elif kind == 5 and len(data) >= at + 2:  # a short length field changed
            data[at:at + 2] = struct.pack(">h", rng.choice([-1, 0, 0x7fff, rng.randrange(-2**15, 2**15)]))
    return bytes(data)


def _exchange(sock, payload: bytes) -> None:
    """Send, then read what comes back for a moment; the broker may close at any point."""
    sock.settimeout(0.05)
    try:
        sock.sendall(payload)
        while sock.recv(65536):
            pass
    except (OSError, ssl.SSLError):
        pass


def test_mutated_handshakes_cause_no_traceback_and_no_growth(secure_broker, pki):
    rng = random.Random(SEED)
    before = rss_mb(secure_broker)
    deadline = time.monotonic() + MAX_SECONDS
    handshakes = _sasl_handshakes()
    sasl_ssl = secure_broker.bootstrap("SASL_SSL").rsplit(":", 1)
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    for round_ in range(ROUNDS):
        if time.monotonic() > deadline:
            break
        frames = handshakes[round_ % len(handshakes)]
        cut = rng.randrange(len(frames))
        payload = b"".join(frames[:cut]) + _mutate(rng, b"".join(frames[cut:]))
        with socket.create_connection((sasl_ssl[0], int(sasl_ssl[1])), timeout=5) as raw:
            try:
                with context.wrap_socket(raw, server_hostname="localhost") as tls:
                    _exchange(tls, payload)
            except (OSError, ssl.SSLError):
                pass
    hello = _client_hello(pki.ca_pem)
    for listener in ("SASL_SSL", "MTLS"):
        host, port = secure_broker.bootstrap(listener).rsplit(":", 1)
        for _ in range(ROUNDS):
            if time.monotonic() > deadline:
                break
            with socket.create_connection((host, int(port)), timeout=5) as sock:
                _exchange(sock, _mutate(rng, hello))
    log = secure_broker.log_text()
    assert "Traceback" not in log, log[log.index("Traceback") - 500:][:3000]
    assert rss_mb(secure_broker) - before < 20
    try:
        roundtrip_kafka_python(secure_broker.bootstrap("SASL_SSL"),
                               Auth("SASL_SSL", "PLAIN", "bob", "bob-secret", ca=pki.ca_pem))
    except StopIteration:  # the consumer read nothing in its 15 s: what did the broker say meanwhile?
        pytest.fail("a healthy kafka-python client was not served after the fuzz; the broker log's end:\n"
                    + secure_broker.log_text()[len(log):][-6000:])
