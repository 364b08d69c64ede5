"""Fetch returns byte ranges of the segment files, as Kafka does (client acceptance of the cut
batch is in compat_tests/test_fetch_ranges.py)."""

from __future__ import annotations

import pytest

from trafka.testing.rawwire import RawClient
from tests.broker.test_produce_fetch_wire import FETCH_V, batch, create, fetch_body, partition_of, produce_body
from trafka.wire import records


@pytest.fixture
def client(trafka_broker):
    with RawClient(trafka_broker.bootstrap_servers, "fetch-ranges") as c:
        yield c


def _fill(client, topic: str, count: int, value: bytes) -> bytes:
    """Produce `count` one-record batches; returns the log's bytes as whole batches."""
    frames = b"".join(client.frame(0, 8, produce_body(topic, batch(value))) for _ in range(count))
    client.send(frames)
    for _ in range(count):
        client.read_frame()
    whole = partition_of(client.request(1, FETCH_V, fetch_body(topic, 0))).records
    assert len(list(records.iter_batches(whole))) == count
    return whole


def _fetch(client, topic, offset, limit, *, partitions=None):
    body = fetch_body(topic, offset)
    body["max_bytes"] = limit
    body["topics"][0]["partitions"][0]["partition_max_bytes"] = limit
    return partition_of(client.request(1, FETCH_V, body))


@pytest.mark.parametrize("limit", [1000, 20_001, 70_000])  # read and joined / sent by sendfile
def test_a_limited_fetch_is_the_byte_range_up_to_the_limit(client, limit):
    topic = "ranges"
    assert create(client, topic).error_code == 0
    whole = _fill(client, topic, 800, b"v" * 90)
    size = len(whole) // 800
    assert limit % size  # the limit falls inside a batch
    part = _fetch(client, topic, 0, limit)
    assert part.error_code == 0
    assert part.records == whole[:limit]  # the same bytes as the file, cut inside the last batch
    # From an offset inside the log: the range starts at that offset's batch.
    part = _fetch(client, topic, 100, limit)
    assert part.records == whole[100 * size : 100 * size + limit]


def test_the_first_batch_comes_whole_even_past_the_limit(client):
    topic = "first-whole"
    assert create(client, topic).error_code == 0
    whole = _fill(client, topic, 3, b"w" * 5000)
    one = len(whole) // 3
    assert _fetch(client, topic, 1, 100).records == whole[one : 2 * one]  # KIP-74


def test_a_range_spans_segments(client):
    topic = "spans"
    assert create(client, topic, configs={"segment.bytes": "20000"}).error_code == 0
    whole = _fill(client, topic, 600, b"s" * 90)
    for offset, limit in ((0, 50_000), (150, 33_333), (0, 1 << 20)):
        size = len(whole) // 600
        assert _fetch(client, topic, offset, limit).records == whole[offset * size : offset * size + limit]


def test_a_fetch_answer_survives_its_topic_being_deleted_while_it_is_sent(client, trafka_broker):
    """The answer waits for a consumer that reads slowly; the topic goes meanwhile; the consumer
    still gets the whole answer, byte for byte (the segment's descriptor is held, as Kafka's
    open file is)."""
    import socket

    topic = "going"
    assert create(client, topic).error_code == 0
    whole = _fill(client, topic, 1, b"g" * 10)
    chunk = batch(*[b"d" * 1000] * 900)  # ~0.9 MB, far more than the socket buffers
    assert client.request(0, 8, produce_body(topic, chunk)).responses[0].partition_responses[0].error_code == 0
    whole = partition_of(client.request(1, FETCH_V, fetch_body(topic, 0))).records
    slow = socket.create_connection(("127.0.0.1", trafka_broker.port))
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    slow.sendall(client.frame(1, FETCH_V, fetch_body(topic, 0)))
    head = slow.recv(4096)  # the answer has started
    deleted = client.request(20, 4, {"topic_names": [topic], "timeout_ms": 5000})
    assert deleted.responses[0].error_code == 0
    data = bytearray(head)
    slow.settimeout(10)
    size = int.from_bytes(data[:4], "big")
    while len(data) < size + 4:
        more = slow.recv(1 << 20)
        assert more, "the broker closed the connection mid-answer"
        data += more
    assert whole in bytes(data)
    slow.close()
