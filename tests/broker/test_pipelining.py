"""Pipelined requests: answered in order, several answers per send, none lost to a bad frame."""

from __future__ import annotations

import struct

from trafka.testing.rawwire import RawClient
from tests.broker.test_produce_fetch_wire import batch, create, fetch_body, produce_body


def test_pipelined_answers_come_in_order_and_survive_a_bad_frame_after_them(trafka_broker):
    with RawClient(trafka_broker.bootstrap_servers, "pipeline") as client:
        assert create(client, "piped").error_code == 0
        meta = {"topics": [{"name": "piped"}], "allow_auto_topic_creation": False,
                "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False}
        frames, ids = [], []
        for i in range(30):
            if i % 3 == 2:
                frames.append(client.frame(1, 11, fetch_body("piped", 0)))  # may wait: never held behind
            elif i % 3 == 1:
                frames.append(client.frame(3, 12, meta))
            else:
                frames.append(client.frame(0, 8, produce_body("piped", batch(b"p%d" % i))))
            ids.append(client.correlation_id)
        bad = struct.pack(">ihhi", 8, 9999, 0, 77)  # an unknown API key: the connection closes
        client.send(b"".join(frames) + bad)
        got = []
        for _ in ids:
            data = client.read_frame()
            got.append(int.from_bytes(data[:4], "big"))
        assert got == ids
        assert client.sock.recv(1) == b""  # then closed
