"""What every client of the matrix must do the same way, through testkit.drivers.

Each test runs once per client (the ``client`` fixture); its own producer writes and its own
consumer reads. Cross-client reads are in test_cross_client.py.
"""

from __future__ import annotations

import time
import uuid

import pytest

from compat_tests.conftest import make_topic
from testkit.drivers import CODECS, CREATE_TIME, LOG_APPEND_TIME, Msg
from trafka.testing.rawwire import RawClient

# kcat writes text lines: one header set per call, no nulls, no timestamps.
HEADERS = (("trace", b"abc"), ("n", b"1"))


def unique(client, what: str) -> str:
    return f"{what}-{client.name}-{uuid.uuid4().hex[:8]}"


@pytest.mark.compat("produce", "consume", "headers")
def test_produce_consume_with_headers(client, bootstrap):
    topic = make_topic(bootstrap, unique(client, "basic"))
    msgs = [Msg(f"k{i}".encode(), f"value-{i}".encode(), HEADERS) for i in range(20)]
    offsets = client.produce(topic, msgs)
    assert offsets in ([], list(range(20)))  # kcat reports none
    got = client.consume(topic, 20)
    assert [(g.offset, g.key, g.value, g.headers) for g in got] == [(i, m.key, m.value, m.headers) for i, m in enumerate(msgs)]


@pytest.mark.compat("compression")
@pytest.mark.parametrize("codec", CODECS[1:])
def test_compressed_round_trip(client, bootstrap, codec):
    topic = make_topic(bootstrap, unique(client, codec))
    # Repetitive values, so every codec really compresses.
    msgs = [Msg(f"k{i}".encode(), (f"{codec}-{i}-" * 40).encode(), HEADERS) for i in range(30)]
    client.produce(topic, msgs, codec=codec)
    got = client.consume(topic, 30)
    assert [(g.offset, g.value, g.headers) for g in got] == [(i, m.value, m.headers) for i, m in enumerate(msgs)]


@pytest.mark.compat("timestamps")
@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_create_time_and_log_append_time(client, bootstrap, codec):
    """LogAppendTime rewrites the batch header's timestamp (compressed batches included:
    the records inside keep theirs, consumers must take the batch's)."""
    create = make_topic(bootstrap, unique(client, "ct"))
    append = make_topic(bootstrap, unique(client, "lat"), configs={"message.timestamp.type": "LogAppendTime"})
    then = 1_600_000_000_000  # 2020
    explicit = client.name != "kcat"
    msgs = [Msg(b"k", f"v{i}".encode(), HEADERS, then + i if explicit else None) for i in range(3)]

    before = int(time.time() * 1000) - 1
    client.produce(create, msgs, codec=codec)
    got = client.consume(create, 3)
    assert {g.timestamp_type for g in got} == {CREATE_TIME}
    if explicit:
        assert [g.timestamp for g in got] == [then, then + 1, then + 2]
    else:
        assert all(before - 60_000 <= g.timestamp <= time.time() * 1000 for g in got)

    before = int(time.time() * 1000) - 1
    client.produce(append, msgs, codec=codec)
    after = int(time.time() * 1000) + 1
    got = client.consume(append, 3)
    assert {g.timestamp_type for g in got} == {LOG_APPEND_TIME}
    assert all(before <= g.timestamp <= after for g in got), [g.timestamp for g in got]


@pytest.mark.compat("idempotent")
def test_idempotent_producer_gets_an_id_and_sequences(client, bootstrap):
    """InitProducerId answered, and each batch carries the producer id, its epoch and sequences
    that continue from one batch to the next (what the broker's duplicate check relies on)."""
    topic = make_topic(bootstrap, unique(client, "idem"))
    msgs = [Msg(b"k", f"v{i}".encode(), HEADERS) for i in range(10)]
    client.produce(topic, msgs[:5], idempotent=True)
    client.produce(topic, msgs[5:], idempotent=True)  # a second producer: a new id, sequences from 0
    with RawClient(bootstrap) as raw:
        batches = raw.fetch_batches(topic)
    assert all(b.producer_id >= 0 and b.producer_epoch >= 0 for b in batches), batches
    by_producer: dict[int, list] = {}
    for b in batches:
        by_producer.setdefault(b.producer_id, []).append(b)
    assert len(by_producer) == 2
    for own in by_producer.values():
        expected = 0
        for b in own:
            assert b.base_sequence == expected
            expected = b.last_sequence + 1
    assert [g.value for g in client.consume(topic, 10)] == [m.value for m in msgs]


@pytest.mark.compat("group")
def test_group_basic_commit_and_resume(client, bootstrap):
    """Basic group scenario (extend in tests/groups for rebalances): subscribe with a group id,
    consume, commit, close; a new consumer of the same group resumes at the committed offset."""
    topic = make_topic(bootstrap, unique(client, "grp"))
    group = unique(client, "group")
    msgs = [Msg(f"k{i}".encode(), f"v{i}".encode(), HEADERS) for i in range(10)]
    client.produce(topic, msgs[:6])
    assert [g.offset for g in client.group_consume(topic, group, 6)] == list(range(6))
    client.produce(topic, msgs[6:])
    got = client.group_consume(topic, group, 4)
    assert [(g.offset, g.value) for g in got] == [(i, msgs[i].value) for i in range(6, 10)]
