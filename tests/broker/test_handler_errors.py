"""A handler that raises is answered with an error code in every error_code field of its
response (UNKNOWN_SERVER_ERROR; KAFKA_STORAGE_ERROR for an I/O error), and the connection stays
open for the next request, as in Kafka. The broker runs in process so the test can make one
handler fail; everything else (socket, framing, dispatch) is the real path."""

from __future__ import annotations

import dataclasses
import errno

import pytest

from trafka.broker.requests import routes
from trafka.testing.rawwire import RawClient
from trafka.wire import records
from trafka.wire.errors import ErrorCode

PRODUCE, METADATA, LIST_GROUPS = 0, 3, 16


@pytest.fixture
def failing(monkeypatch):
    """failing(api_key, exc): that API's handler raises exc from now on (until the test ends)."""

    def make(api_key: int, exc: Exception):
        async def handle(ctx, request):
            raise exc

        monkeypatch.setitem(routes.ROUTES, api_key, dataclasses.replace(routes.ROUTES[api_key], handle=handle))

    return make


def _produce(client, topic: str, acks: int = -1):
    batch = records.encode_batch([records.Record(b"k", b"v", (), 1_700_000_000_000)])
    return client.request(PRODUCE, 7, {
        "transactional_id": None, "acks": acks, "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}, {"index": 1, "records": batch}]}],
    })


def test_a_failing_handler_is_answered_and_the_connection_stays(trafka_inprocess_broker, failing):
    failing(LIST_GROUPS, RuntimeError("a bug"))
    with RawClient(trafka_inprocess_broker.bootstrap_servers) as client:
        answer = client.request(LIST_GROUPS, 3, {})
        assert answer.error_code == ErrorCode.UNKNOWN_SERVER_ERROR
        assert answer.groups == []
        metadata = client.request(METADATA, 1, {"topics": None})  # same connection, still served
        assert metadata.brokers
    assert "ListGroups v3" in trafka_inprocess_broker.log_text() and "a bug" in trafka_inprocess_broker.log_text()


def test_an_io_error_is_a_storage_error_on_every_partition(trafka_inprocess_broker, failing):
    failing(PRODUCE, OSError(errno.EIO, "Input/output error"))
    with RawClient(trafka_inprocess_broker.bootstrap_servers) as client:
        answer = _produce(client, "orders")
        codes = [(t.name, p.index, p.error_code) for t in answer.responses for p in t.partition_responses]
        assert codes == [("orders", 0, ErrorCode.KAFKA_STORAGE_ERROR), ("orders", 1, ErrorCode.KAFKA_STORAGE_ERROR)]
        assert client.request(METADATA, 1, {"topics": None}).brokers


def test_acks_0_has_no_answer_so_the_connection_closes(trafka_inprocess_broker, failing):
    failing(PRODUCE, RuntimeError("a bug"))
    with RawClient(trafka_inprocess_broker.bootstrap_servers) as client:
        client.send(client.frame(PRODUCE, 7, {
            "transactional_id": None, "acks": 0, "timeout_ms": 5000,
            "topic_data": [{"name": "orders", "partition_data": [
                {"index": 0, "records": records.encode_batch([records.Record(b"k", b"v", (), 1)])}]}],
        }))
        assert client.sock.recv(1) == b""
