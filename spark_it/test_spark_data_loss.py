"""Data a query had not read yet disappears (DeleteRecords, retention): failOnDataLoss decides.

Spark detects the loss in its executors: a fetch below the log start offset gets OFFSET_OUT_OF_RANGE
(auto.offset.reset=none), then the consumer's earliest offset tells how far to skip.
Needs the Spark Kafka connector (see docs/spark.md); without it every test here skips.
"""

from __future__ import annotations

import time

import pytest

from trafka.testing.waiting import wait_until
from spark_it.harness import alter_topic, create_topic, delete_records, produce, run_available_now

pytestmark = pytest.mark.timeout(240)


def run_to_json(spark, bootstrap, topic, out, checkpoint, fail_on_data_loss: bool):
    df = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
          .option("startingOffsets", "earliest").option("failOnDataLoss", str(fail_on_data_loss).lower()).load()
          .selectExpr("CAST(value AS STRING) AS value", "offset"))
    return run_available_now(df.writeStream.format("json").option("path", str(out))
                             .option("checkpointLocation", str(checkpoint)))


def read_offsets(spark, out) -> list[int]:
    return sorted(r.offset for r in spark.read.json(str(out)).collect())


def values(n: int, start: int = 0) -> list[dict]:
    return [{"value": f"v{i}".encode(), "partition": 0} for i in range(start, start + n)]


@pytest.fixture
def half_read_topic(spark, bootstrap, topic_name, tmp_path):
    """A topic whose offsets 0-9 a query has read (per failOnDataLoss setting), then 10-19 written
    and everything below 15 deleted."""
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=1)
    produce(bootstrap, topic, values(10))

    def prime(fail_on_data_loss: bool):
        out, ck = tmp_path / f"out-{fail_on_data_loss}", tmp_path / f"ck-{fail_on_data_loss}"
        run_to_json(spark, bootstrap, topic, out, ck, fail_on_data_loss)
        assert read_offsets(spark, out) == list(range(10))
        return out, ck

    primed = {flag: prime(flag) for flag in (True, False)}
    produce(bootstrap, topic, values(10, start=10))
    delete_records(bootstrap, {(topic, 0): 15})
    return topic, primed


def test_fail_on_data_loss_true_fails_the_query(spark, bootstrap, half_read_topic):
    from pyspark.errors import StreamingQueryException

    topic, primed = half_read_topic
    out, ck = primed[True]
    with pytest.raises(StreamingQueryException) as info:
        run_to_json(spark, bootstrap, topic, out, ck, fail_on_data_loss=True)
    assert "Some data may have been lost" in str(info.value)
    assert "failOnDataLoss" in str(info.value)
    assert read_offsets(spark, out) == list(range(10))


def test_fail_on_data_loss_false_continues_from_the_new_start(spark, bootstrap, half_read_topic):
    topic, primed = half_read_topic
    out, ck = primed[False]
    run_to_json(spark, bootstrap, topic, out, ck, fail_on_data_loss=False)
    assert read_offsets(spark, out) == list(range(10)) + list(range(15, 20))


def test_retention_removes_unread_data_and_the_query_skips_it(spark, bootstrap, topic_name, tmp_path):
    """Short retention.ms / segment.ms: closed segments go, the query continues after the gap."""
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=1)
    out, ck = tmp_path / "out", tmp_path / "ck"
    old = int(time.time() * 1000) - 60_000  # already past retention
    # The segment's first record is a minute old, so segment.ms (counted from it, as Kafka's
    # shouldRoll does) has passed whatever this machine's speed: the "new" append rolls it.
    produce(bootstrap, topic, [{"value": b"read", "partition": 0, "timestamp_ms": old}])
    run_to_json(spark, bootstrap, topic, out, ck, fail_on_data_loss=False)
    alter_topic(bootstrap, topic, {"retention.ms": "1000", "segment.ms": "300"})
    produce(bootstrap, topic, [{"value": f"old{i}".encode(), "partition": 0, "timestamp_ms": old} for i in range(3)])
    produce(bootstrap, topic, [{"value": b"new", "partition": 0}])
    _wait_for_log_start(bootstrap, topic, 4)
    run_to_json(spark, bootstrap, topic, out, ck, fail_on_data_loss=False)
    rows = spark.read.json(str(out)).collect()
    assert sorted(r.value for r in rows) == ["new", "read"]


def _wait_for_log_start(bootstrap: str, topic: str, at_least: int, timeout_s: float = 20) -> None:
    from kafka import KafkaConsumer, TopicPartition

    tp = TopicPartition(topic, 0)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        wait_until(lambda: consumer.beginning_offsets([tp])[tp] >= at_least, timeout_s,
                   f"retention to move the log start offset of {topic} to {at_least}")
    finally:
        consumer.close()
