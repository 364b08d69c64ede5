"""kcat 1.7.1 from Debian (librdkafka 2.0.2): metadata listing and offset queries."""

from __future__ import annotations

import json

import pytest

from testkit.drivers import Kcat, Msg

pytestmark = pytest.mark.compat_client("kcat")


@pytest.fixture
def kc(kcat, bootstrap):
    return Kcat(bootstrap, kcat)


@pytest.mark.compat("metadata")
def test_metadata_listing(kc, bootstrap, trafka_topic):
    kc.produce(trafka_topic, [Msg(b"k", b"v")])  # auto-creates the topic
    md = json.loads(kc.run("-L", "-J").stdout)
    assert [(b["id"], b["name"]) for b in md["brokers"]] == [(0, bootstrap)]
    (topic,) = [t for t in md["topics"] if t["topic"] == trafka_topic]
    assert [(p["partition"], p["leader"]) for p in topic["partitions"]] == [(0, 0)]
    plain = kc.run("-L", "-t", trafka_topic).stdout.decode()
    assert f'topic "{trafka_topic}" with 1 partitions' in plain
    assert "(controller)" in plain


@pytest.mark.compat("list-offsets")
def test_query_offsets_by_timestamp(kc, trafka_topic):
    kc.produce(trafka_topic, [Msg(b"k", f"v{i}".encode()) for i in range(3)])
    first_ts = kc.consume(trafka_topic, 1)[0].timestamp

    def query(ts: int) -> int:
        # {"<topic>": {"topic": "<topic>", "0": {"partition": 0, "offset": N}}}
        out = json.loads(kc.run("-Q", "-t", f"{trafka_topic}:0:{ts}", "-J").stdout)
        return out[trafka_topic]["0"]["offset"]

    assert query(first_ts) == 0
    assert query(-2) == 0  # earliest
    assert query(-1) == 3  # latest
    assert query(first_ts + 3_600_000) == -1

