"""Spark's Kafka sink (writeStream and write) against trafka, read back with kafka-python.

Needs the Spark Kafka connector (see docs/spark.md); without it every test here skips.
"""

from __future__ import annotations

import pytest

from spark_it.harness import batch_headers, consume_all, create_topic, produce, run_available_now

pytestmark = pytest.mark.timeout(240)


def assert_idempotent_batches(kafka_broker, topic: str, partitions: int) -> None:
    """Every stored batch carries a producer id and sequence: the sink's producer was idempotent."""
    headers = [h for p in range(partitions) for h in batch_headers(kafka_broker.data_dir, topic, p)]
    assert headers
    assert all(h.producer_id >= 0 and h.base_sequence >= 0 for h in headers), headers


def test_streaming_sink_writes_key_value_headers(spark, bootstrap, kafka_broker, topic_name, tmp_path):
    source, sink = topic_name("src"), topic_name("sink")
    create_topic(bootstrap, source, partitions=2)
    create_topic(bootstrap, sink, partitions=2)
    produce(bootstrap, source, [{"key": f"k{i}".encode() if i % 3 else None, "value": f"v{i}".encode(),
                                 "headers": [("n", str(i).encode())]} for i in range(12)])
    df = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", source)
          .option("startingOffsets", "earliest").option("includeHeaders", "true").load()
          .selectExpr("key", "upper(CAST(value AS STRING)) AS value", "headers"))
    run_available_now(df.writeStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
                      .option("topic", sink).option("checkpointLocation", str(tmp_path / "ck")))
    got = consume_all(bootstrap, sink, 12)
    assert sorted((r.key, r.value, [(k, bytes(v)) for k, v in r.headers]) for r in got
                  if r.key is not None) == sorted(
        (f"k{i}".encode(), f"V{i}".encode(), [("n", str(i).encode())]) for i in range(12) if i % 3)
    assert sorted(r.value for r in got if r.key is None) == sorted(f"V{i}".encode() for i in range(0, 12, 3))
    assert_idempotent_batches(kafka_broker, sink, 2)


def test_batch_sink_honours_topic_and_partition_columns(spark, bootstrap, kafka_broker, topic_name):
    a, b = topic_name("a"), topic_name("b")
    create_topic(bootstrap, a, partitions=3)
    create_topic(bootstrap, b, partitions=1)
    rows = [(a, 2, "x", "1"), (a, 0, "y", "2"), (b, 0, None, "3"), (a, 2, "z", "4")]
    (spark.createDataFrame(rows, "topic STRING, partition INT, key STRING, value STRING")
     .write.format("kafka").option("kafka.bootstrap.servers", bootstrap).save())
    got_a = consume_all(bootstrap, a, 3)
    # Spark splits the rows over tasks, so the order within partition 2 is not fixed.
    assert sorted((r.partition, r.key, r.value) for r in got_a) == [(0, b"y", b"2"), (2, b"x", b"1"), (2, b"z", b"4")]
    got_b = consume_all(bootstrap, b, 1)
    assert [(r.key, r.value) for r in got_b] == [(None, b"3")]
    assert_idempotent_batches(kafka_broker, a, 3)


def test_streaming_sink_restart_does_not_rewrite_committed_batches(spark, bootstrap, topic_name, tmp_path):
    source, sink = topic_name("src"), topic_name("sink")
    create_topic(bootstrap, source, partitions=1)
    create_topic(bootstrap, sink, partitions=1)

    def run():
        df = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", source).option("startingOffsets", "earliest").load().select("key", "value"))
        run_available_now(df.writeStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
                          .option("topic", sink).option("checkpointLocation", str(tmp_path / "ck")))

    produce(bootstrap, source, [{"value": f"a{i}".encode()} for i in range(5)])
    run()
    produce(bootstrap, source, [{"value": f"b{i}".encode()} for i in range(3)])
    run()
    got = consume_all(bootstrap, sink, 8)
    assert [r.value for r in got] == [f"a{i}".encode() for i in range(5)] + [f"b{i}".encode() for i in range(3)]
