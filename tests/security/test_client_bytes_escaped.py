"""Bytes a client chose (its client id, software name, SCRAM user name, group member ids) reach
neither the broker's log nor the console with their control characters: NUL, ESC and BEL are
shown as backslash escapes, so nobody tailing the log gets a client's terminal escapes."""

from __future__ import annotations

import json
import re
import struct
import urllib.request

import pytest

from testkit.security import PLAIN_JAAS
from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_for_log, wait_until

EVIL = "ev\x1b[31mil\x07\x00"
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@pytest.fixture
def broker(tmp_path):
    broker = TrafkaBroker(data_dir=tmp_path / "data", config={
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "sasl.jaas.config": PLAIN_JAAS, "console.port": "0"}).start()
    try:
        yield broker
    finally:
        broker.stop()


def test_a_scram_user_name_with_control_bytes_is_logged_escaped(broker):
    with RawClient(broker.bootstrap("SASL_PLAINTEXT"), EVIL) as raw:
        assert raw.request(17, 1, {"mechanism": "SCRAM-SHA-256"}).error_code == 0
        answer = raw.request(36, 2, {"auth_bytes": f"n,,n={EVIL},r=abcdefgh".encode()})
        assert answer.error_code != 0
    log = wait_for_log(broker, "failed authentication")
    assert "ev\\x1b[31mil\\x07\\x00" in log
    assert not RAW_CONTROL.search(log), repr(RAW_CONTROL.search(log))


def test_a_client_id_with_control_bytes_is_shown_escaped_by_the_console(broker):
    with RawClient(broker.bootstrap("PLAINTEXT"), EVIL) as raw:
        raw.request(18, 3, {"client_software_name": "sw\x1b]0;owned\x07", "client_software_version": "1\x00"})
        raw.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                            "include_topic_authorized_operations": False})
        with urllib.request.urlopen(broker.console_url + "api/v1/broker", timeout=10) as response:
            text = response.read().decode()
        connections = json.loads(text)["connections"]
        shown = [c for c in connections if c["client_id"] and c["client_id"].startswith("ev")]
        assert shown and shown[0]["client_id"] == "ev\\x1b[31mil\\x07\\x00"
        assert shown[0]["software_name"] == "sw\\x1b]0;owned\\x07"
        assert shown[0]["software_version"] == "1\\x00"
        # an unknown API key (99) from client id "\x1b": closed with a log line naming the client
        header = struct.pack(">hhih", 99, 0, 1, 1) + b"\x1b"
        raw.sock.sendall(struct.pack(">i", len(header)) + header)
    log = wait_for_log(broker, "unknown API key 99")
    assert not RAW_CONTROL.search(log), repr(RAW_CONTROL.search(log))
