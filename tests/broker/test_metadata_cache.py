"""Metadata answers are cached until the topic set changes; every change shows at once."""

from __future__ import annotations

import pytest

from trafka.testing.rawwire import RawClient
from tests.broker.test_produce_fetch_wire import create


@pytest.fixture
def client(trafka_broker):
    with RawClient(trafka_broker.bootstrap_servers, "metadata-cache") as c:
        yield c


def _metadata(client, version: int, topics):
    body = {"topics": None if topics is None else [{"name": t} for t in topics],
            "allow_auto_topic_creation": False, "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False}
    return client.request(3, version, body)


def _partitions(answer) -> dict:
    return {t.name: (t.error_code, len(t.partitions)) for t in answer.topics}


@pytest.mark.parametrize("version", [4, 9, 12])  # classic and flexible response headers
def test_cached_answers_follow_topic_changes(client, version):
    assert _partitions(_metadata(client, version, ["cached"])) == {"cached": (3, 0)}
    assert create(client, "cached").error_code == 0
    for _ in range(2):  # the second answer comes from the cache
        assert _partitions(_metadata(client, version, ["cached"])) == {"cached": (0, 1)}
        assert "cached" in _partitions(_metadata(client, version, None))
    grown = client.request(37, 1, {"topics": [{"name": "cached", "count": 4, "assignments": None}],
                                   "timeout_ms": 5000, "validate_only": False})
    assert grown.results[0].error_code == 0
    assert _partitions(_metadata(client, version, ["cached"])) == {"cached": (0, 4)}
    deleted = client.request(20, 4, {"topic_names": ["cached"], "timeout_ms": 5000})
    assert deleted.responses[0].error_code == 0
    assert _partitions(_metadata(client, version, ["cached"])) == {"cached": (3, 0)}
    assert "cached" not in _partitions(_metadata(client, version, None))


def test_each_cached_answer_carries_its_own_correlation_id(client):
    assert create(client, "ids").error_code == 0
    body = {"topics": [{"name": "ids"}], "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False}
    for _ in range(3):
        frame = client.frame(3, 12, body)
        client.send(frame)
        data = client.read_frame()
        assert int.from_bytes(data[:4], "big") == client.correlation_id
