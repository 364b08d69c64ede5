"""Retention deletes only segments wholly below the high watermark, as Kafka's
UnifiedLog.deletableSegments does ("so that the log start offset can never exceed it"): on a
leader whose follower lags, records past the high watermark stay until they are replicated,
however old their timestamps or however far over retention.bytes the log is. Real clients over
real sockets; retention runs when the broker clock passes log.retention.check.interval.ms.
(Found reading Kafka's code: trafka deleted them, so the leader's log start went past its high
watermark, and records acknowledged with acks=1 were never readable by anyone.)"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, TopicPartition

from testkit.cluster import create_on_three, produce_acknowledged, read_from_start
from trafka.testing.waiting import wait_until

RECORDS = 3000
HOUR_MS = 3_600_000


def _watermarks(cluster, name: str) -> tuple[int, int]:
    """(log start offset, high watermark) as a consumer's ListOffsets sees them."""
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "watch"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(name, 0), timeout=10, cached=False)
    finally:
        consumer.close()


def _produce_old(cluster, name: str, count: int) -> dict[bytes, int]:
    """`count` records stamped an hour ago, acks=1, in batches well under segment.bytes: each
    value's acknowledged offset."""
    return produce_acknowledged(cluster, name, [b"old-%d" % i for i in range(count)],
                                timestamp=int(time.time() * 1000) - HOUR_MS, acks="1", **{"batch.size": 4000})


@pytest.mark.trafka_config({"log.retention.check.interval.ms": 1000})
@pytest.mark.parametrize("retention", [{"retention.ms": "60000"}, {"retention.bytes": "20000"}],
                         ids=["retention.ms", "retention.bytes"])
def test_retention_keeps_what_the_high_watermark_has_not_passed(trafka_cluster, retention):
    cluster = trafka_cluster
    leader, (lagging, _) = create_on_three(cluster, "aged", **{"segment.bytes": "16384", "min.insync.replicas": "1",
                                                       **retention})
    cluster.pause_replication(lagging)  # in the ISR for replica.lag.time.max.ms (30 s) of broker time
    acknowledged = _produce_old(cluster, "aged", RECORDS)
    assert sorted(acknowledged.values()) == list(range(RECORDS))
    assert _watermarks(cluster, "aged") == (0, 0)  # the lagging follower holds the high watermark
    for _ in range(3):  # retention checks run; nothing is below the high watermark
        cluster.advance_clock(1500)
        low, high = _watermarks(cluster, "aged")
        assert low <= high, f"log start offset {low} past the high watermark {high}"
        assert (low, high) == (0, 0)

    # Replicated, everything is below the high watermark: a consumer reads it all, then
    # retention may take what it names.
    cluster.resume_replication(lagging)
    wait_until(lambda: _watermarks(cluster, "aged")[1] == RECORDS, 20, "the high watermark at the log end")
    seen = read_from_start(cluster.bootstrap_servers, "aged", 1, RECORDS, timeout=30)  # offsets 0, 1, ...
    assert seen == sorted(acknowledged, key=acknowledged.get)  # each acknowledged value at its offset
    for node in (leader, lagging):
        assert cluster.partition_state("aged", 0)["leader"] == leader and node in cluster.partition_state("aged", 0)["isr"]
    cluster.advance_clock(1500)
    low, high = _watermarks(cluster, "aged")
    assert high == RECORDS and 0 < low <= high
