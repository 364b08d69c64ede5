"""Written by one client, read by another: every codec, keys, headers and CreateTime stamps.

Each writer fills its own topic once per session (one producer per codec, so the partition
holds a batch or more of every codec); each reader then reads every writer's topic.
"""

from __future__ import annotations

import uuid

import pytest

from compat_tests.conftest import CLIENT_NAMES, make_driver, make_topic
from testkit.drivers import CODECS, CREATE_TIME, Msg

PER_CODEC = 8
STAMP = 1_700_000_000_000


def messages(writer: str, codec: str) -> list[Msg]:
    headers = (("writer", writer.encode()), ("codec", codec.encode()))
    timestamp = (lambda i: None) if writer == "kcat" else (lambda i: STAMP + i)
    return [Msg(f"{codec}-{i}".encode(), (f"{writer} {codec} {i} " * 20).encode(), headers, timestamp(i))
            for i in range(PER_CODEC)]


_written: dict[str, tuple[str, list[Msg]]] = {}


def written_topic(request, writer: str, bootstrap: str) -> tuple[str, list[Msg]]:
    """The writer's topic and what it wrote, produced on first use in this session."""
    if writer not in _written:
        driver = make_driver(request, writer, bootstrap)
        topic = make_topic(bootstrap, f"cross-{writer}-{uuid.uuid4().hex[:8]}")
        sent: list[Msg] = []
        for codec in CODECS:
            msgs = messages(writer, codec)
            driver.produce(topic, msgs, codec=codec)
            sent += msgs
        _written[writer] = (topic, sent)
    return _written[writer]


@pytest.mark.compat_cross
@pytest.mark.parametrize("reader", CLIENT_NAMES)
@pytest.mark.parametrize("writer", CLIENT_NAMES)
def test_read_what_another_client_wrote(request, bootstrap, writer, reader):
    topic, sent = written_topic(request, writer, bootstrap)
    got = make_driver(request, reader, bootstrap).consume(topic, len(sent))
    assert [g.offset for g in got] == list(range(len(sent)))
    assert [(g.key, g.value, g.headers) for g in got] == [(m.key, m.value, m.headers) for m in sent]
    assert {g.timestamp_type for g in got} == {CREATE_TIME}
    if writer != "kcat":
        assert [g.timestamp for g in got] == [m.timestamp for m in sent]
