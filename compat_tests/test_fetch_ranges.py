"""Fetch answers are byte ranges, as Kafka's: the last batch of a partition may be cut short.

Every client of the matrix must drop that trailing partial batch and fetch it again from its
offset. The log here is ~1.3 MB of ~1 KB batches (one per Produce, written raw) over several
segments, so each client's default 1 MB partition limit ends inside a batch, and its reads
cross segment boundaries (where the range switches file) and use sendfile (ranges >= 16 KB).
"""

from __future__ import annotations

import uuid

import pytest

from compat_tests.conftest import make_topic
from trafka.testing.rawwire import RawClient
from trafka.wire import records

BATCHES = 1300


def _value(i: int) -> bytes:
    return (b"%06d-" % i) * 140 + bytes([97 + i % 26]) * (i % 17)  # sizes vary, so cuts land anywhere


@pytest.mark.compat("consume")
def test_consumes_a_log_of_small_batches_with_partial_tails(client, bootstrap):
    topic = make_topic(bootstrap, f"ranges-{client.name}-{uuid.uuid4().hex[:8]}",
                       configs={"segment.bytes": str(300_000)})
    with RawClient(bootstrap) as raw:
        frames = b"".join(
            raw.produce_frame(topic, 0, records.encode_batch([records.Record(b"k%d" % i, _value(i), (), 1_700_000_000_000 + i)]))
            for i in range(BATCHES)
        )
        raw.send(frames)
        for _ in range(BATCHES):
            raw.read_frame()
        assert len(raw.fetch_batches(topic)) == BATCHES
    got = client.consume(topic, BATCHES)
    assert [g.offset for g in got] == list(range(BATCHES))
    assert all(g.value == _value(g.offset) for g in got)
