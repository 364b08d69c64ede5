"""Spark's Kafka source (readStream and read) against trafka: rows, starting/ending offsets, restarts.

Needs the Spark Kafka connector (see docs/spark.md); without it every test here skips.
"""

from __future__ import annotations

import json
import time

import pytest

from spark_it.harness import (
    create_topic, process_all_available, produce, run_available_now, unique,
)

pytestmark = pytest.mark.timeout(240)

# Recent enough that retention (7 days by default, checked every 200 ms here) keeps the records.
BASE_TS = (int(time.time()) - 3600) * 1000
COLUMNS = ["key", "value", "topic", "partition", "offset", "unix_millis(timestamp) AS ts", "timestampType"]


def records(n: int, partitions: int = 1, start: int = 0, with_ts: bool = True) -> list[dict]:
    """n records round-robin over partitions; record i has key k<i> (None every 5th), value v<i>,
    header h=<i>, and timestamp BASE_TS + 1000 * i."""
    out = []
    for i in range(start, start + n):
        r = {"key": None if i % 5 == 4 else f"k{i}".encode(), "value": f"v{i}".encode(),
             "headers": [("h", str(i).encode()), ("empty", b"")], "partition": i % partitions}
        if with_ts:
            r["timestamp_ms"] = BASE_TS + 1000 * i
        out.append(r)
    return out


def expected_rows(topic: str, sent: list[dict], metadata: list) -> list[tuple]:
    return sorted((
        (r["key"], r["value"], topic, md.partition, md.offset, md.timestamp, 0,
         [(k, v) for k, v in r["headers"]])
        for r, md in zip(sent, metadata)
    ), key=by_position)


def to_tuples(rows) -> list[tuple]:
    out = []
    for r in rows:
        headers = [(h.key, None if h.value is None else bytes(h.value)) for h in (r.headers or [])]
        out.append((None if r.key is None else bytes(r.key), bytes(r.value), r.topic, r.partition, r.offset,
                    r.ts, r.timestampType, headers))
    return sorted(out, key=by_position)


def by_position(row: tuple) -> tuple[int, int]:
    return row[3], row[4]


def offsets_of(rows) -> list[tuple[int, int]]:
    return sorted((r.partition, r.offset) for r in rows)


def stream(spark, bootstrap: str, **options):
    reader = spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def collect_available_now(spark, df, tmp_path, columns=COLUMNS) -> list:
    """Run df to a memory table with availableNow and return its rows."""
    name = unique("q").replace("-", "_")
    run_available_now(df.selectExpr(*columns).writeStream.format("memory").queryName(name)
                      .option("checkpointLocation", str(tmp_path / name)))
    return spark.sql(f"SELECT * FROM {name}").collect()


def test_subscribe_earliest_rows_match_what_kafka_python_wrote(spark, bootstrap, topic_name, tmp_path):
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=2)
    sent = records(10, partitions=2)
    metadata = produce(bootstrap, topic, sent)
    df = stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest", includeHeaders="true")
    rows = collect_available_now(spark, df, tmp_path, COLUMNS + ["headers"])
    assert to_tuples(rows) == expected_rows(topic, sent, metadata)


def test_new_data_shows_up_in_the_next_micro_batches(spark, bootstrap, topic_name, tmp_path):
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=2)
    produce(bootstrap, topic, records(4, partitions=2))
    name = unique("live").replace("-", "_")
    query = (stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest")
             .selectExpr(*COLUMNS).writeStream.format("memory").queryName(name)
             .option("checkpointLocation", str(tmp_path / "ck")).trigger(processingTime="100 milliseconds").start())
    try:
        process_all_available(query)
        assert spark.sql(f"SELECT count(*) FROM {name}").first()[0] == 4
        for round_ in range(2):
            produce(bootstrap, topic, records(3, partitions=2, start=4 + 3 * round_))
            process_all_available(query)
        rows = spark.sql(f"SELECT * FROM {name}").collect()
        assert sorted(bytes(r.value) for r in rows) == sorted(f"v{i}".encode() for i in range(10))
        assert len(set(offsets_of(rows))) == 10
        batches_with_data = [p for p in query.recentProgress if p["numInputRows"] > 0]
        assert len(batches_with_data) >= 3, query.recentProgress
        assert query.exception() is None
    finally:
        query.stop()


def test_subscribe_pattern_reads_every_matching_topic(spark, bootstrap, topic_name, tmp_path):
    prefix = topic_name("pat")
    a, b, other = f"{prefix}-a", f"{prefix}-b", topic_name("other")
    for t in (a, b, other):
        create_topic(bootstrap, t, partitions=1)
        produce(bootstrap, t, [{"value": t.encode()}])
    df = stream(spark, bootstrap, subscribePattern=f"{prefix}-.*", startingOffsets="earliest")
    rows = collect_available_now(spark, df, tmp_path)
    assert sorted((r.topic, bytes(r.value)) for r in rows) == [(a, a.encode()), (b, b.encode())]


def test_assign_reads_only_the_assigned_partitions(spark, bootstrap, topic_name, tmp_path):
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=3)
    produce(bootstrap, topic, records(9, partitions=3))
    df = stream(spark, bootstrap, assign=json.dumps({topic: [0, 2]}), startingOffsets="earliest")
    rows = collect_available_now(spark, df, tmp_path)
    assert sorted({r.partition for r in rows}) == [0, 2]
    assert len(rows) == 6


def test_starting_offsets_latest_skips_what_was_there(spark, bootstrap, topic_name, tmp_path):
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=2)
    produce(bootstrap, topic, records(4, partitions=2))
    name = unique("latest").replace("-", "_")
    query = (stream(spark, bootstrap, subscribe=topic, startingOffsets="latest").selectExpr(*COLUMNS)
             .writeStream.format("memory").queryName(name).option("checkpointLocation", str(tmp_path / "ck"))
             .trigger(processingTime="100 milliseconds").start())
    try:
        process_all_available(query)  # the first batch fixes the starting offsets at the end
        produce(bootstrap, topic, records(4, partitions=2, start=4))
        process_all_available(query)
        rows = spark.sql(f"SELECT * FROM {name}").collect()
        assert sorted(bytes(r.value) for r in rows) == [f"v{i}".encode() for i in range(4, 8)]
        assert offsets_of(rows) == [(0, 2), (0, 3), (1, 2), (1, 3)]
    finally:
        query.stop()


def test_starting_offsets_json(spark, bootstrap, topic_name, tmp_path):
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=2)
    produce(bootstrap, topic, records(10, partitions=2))  # 5 per partition
    starting = {topic: {"0": 3, "1": -2}}  # partition 0 from offset 3, partition 1 from the earliest
    df = stream(spark, bootstrap, subscribe=topic, startingOffsets=json.dumps(starting))
    rows = collect_available_now(spark, df, tmp_path)
    assert offsets_of(rows) == [(0, 3), (0, 4)] + [(1, o) for o in range(5)]


def test_starting_timestamp(spark, bootstrap, topic_name, tmp_path):
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=2)
    produce(bootstrap, topic, records(10, partitions=2))  # record i at BASE_TS + 1000 i
    df = stream(spark, bootstrap, subscribe=topic, startingTimestamp=str(BASE_TS + 5500))
    rows = collect_available_now(spark, df, tmp_path)
    assert sorted(bytes(r.value) for r in rows) == sorted(f"v{i}".encode() for i in range(6, 10))
    assert all(r.ts >= BASE_TS + 5500 for r in rows)


def test_starting_offsets_by_timestamp_per_partition(spark, bootstrap, topic_name, tmp_path):
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=2)
    produce(bootstrap, topic, records(10, partitions=2))
    by_ts = {topic: {"0": BASE_TS + 4000, "1": BASE_TS}}  # partition 0 from record 4, 1 from record 1
    df = stream(spark, bootstrap, subscribe=topic, startingOffsetsByTimestamp=json.dumps(by_ts))
    rows = collect_available_now(spark, df, tmp_path)
    assert sorted(bytes(r.value) for r in rows) == sorted(f"v{i}".encode() for i in (4, 6, 8, 1, 3, 5, 7, 9))


def test_restart_from_checkpoint_has_no_loss_and_no_duplicates(spark, bootstrap, topic_name, tmp_path):
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=2)
    produce(bootstrap, topic, records(6, partitions=2))
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run():
        df = stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest")
        return run_available_now(df.selectExpr("CAST(value AS STRING) AS value", "partition", "offset")
                                 .writeStream.format("json").option("path", str(out))
                                 .option("checkpointLocation", str(checkpoint)))

    first = run()
    assert sum(p["numInputRows"] for p in first.recentProgress) == 6
    produce(bootstrap, topic, records(5, partitions=2, start=6))
    second = run()
    assert sum(p["numInputRows"] for p in second.recentProgress) == 5
    rows = spark.read.json(str(out)).collect()
    assert sorted(r.value for r in rows) == sorted(f"v{i}" for i in range(11))
    assert len({(r.partition, r.offset) for r in rows}) == 11


def test_batch_read_with_offsets(spark, bootstrap, topic_name):
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=2)
    sent = records(10, partitions=2)
    metadata = produce(bootstrap, topic, sent)
    rows = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
            .option("startingOffsets", json.dumps({topic: {"0": 1, "1": -2}}))
            .option("endingOffsets", json.dumps({topic: {"0": 4, "1": -1}}))
            .option("includeHeaders", "true").load().selectExpr(*COLUMNS, "headers").collect())
    keep = [(r, md) for r, md in zip(sent, metadata) if md.partition == 1 or 1 <= md.offset < 4]
    assert to_tuples(rows) == expected_rows(topic, [r for r, _ in keep], [md for _, md in keep])


def test_batch_read_with_timestamps(spark, bootstrap, topic_name):
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=2)
    produce(bootstrap, topic, records(10, partitions=2))
    rows = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
            .option("startingTimestamp", str(BASE_TS + 2000)).option("endingTimestamp", str(BASE_TS + 7000))
            .load().selectExpr(*COLUMNS).collect())
    # From the first record at >= start up to (not including) the first record at >= end.
    assert sorted(bytes(r.value) for r in rows) == sorted(f"v{i}".encode() for i in range(2, 7))


def test_batch_read_default_range_is_earliest_to_latest(spark, bootstrap, topic_name):
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=1)
    produce(bootstrap, topic, records(3, with_ts=False))
    before = int(time.time() * 1000) - 60_000
    rows = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
            .load().selectExpr(*COLUMNS).collect())
    assert [r.offset for r in sorted(rows, key=lambda r: r.offset)] == [0, 1, 2]
    assert all(r.ts > before for r in rows)


def test_deprecated_consumer_based_offset_fetching(spark, bootstrap, topic_name, tmp_path):
    """spark.sql.streaming.kafka.useDeprecatedOffsetFetching=true: the driver finds partitions and
    offsets with a subscribed KafkaConsumer in group spark-kafka-source-...-driver-0 (JoinGroup,
    SyncGroup, ListOffsets) instead of an Admin client."""
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=2)
    produce(bootstrap, topic, records(6, partitions=2))
    spark.conf.set("spark.sql.streaming.kafka.useDeprecatedOffsetFetching", "true")
    try:
        df = stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest")
        rows = collect_available_now(spark, df, tmp_path)
    finally:
        spark.conf.unset("spark.sql.streaming.kafka.useDeprecatedOffsetFetching")
    assert offsets_of(rows) == [(p, o) for p in (0, 1) for o in range(3)]


def test_max_offsets_per_trigger_and_min_partitions_read_inside_batches(spark, bootstrap, topic_name, tmp_path):
    """20 records produced with linger (so they share stored batches), read 6 offsets per
    micro-batch split over 3 tasks: most fetches start in the middle of a batch."""
    topic = topic_name()
    create_topic(bootstrap, topic, partitions=1)
    produce(bootstrap, topic, [{"value": f"v{i}".encode(), "partition": 0} for i in range(20)], linger_ms=50)
    name = unique("limited").replace("-", "_")
    df = stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger="6",
                minPartitions="3")
    query = run_available_now(df.selectExpr(*COLUMNS).writeStream.format("memory").queryName(name)
                              .option("checkpointLocation", str(tmp_path / "ck")))
    rows = spark.sql(f"SELECT * FROM {name}").collect()
    assert offsets_of(rows) == [(0, o) for o in range(20)]
    assert [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]] == [6, 6, 6, 2]


def test_read_committed_skips_aborted_records_and_stops_at_open_transactions(request, spark, bootstrap, topic_name):
    """kafka.isolation.level=read_committed (docs/transactions.md): a batch read ends at the last
    stable offset and leaves out aborted records."""
    from spark_it.test_connector_io import _transactional_topic

    topic = topic_name()
    create_topic(bootstrap, topic, partitions=1)
    _transactional_topic(request, bootstrap, topic)
    committed = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
                 .option("kafka.isolation.level", "read_committed").load().selectExpr("offset", "value").collect())
    assert [(r.offset, bytes(r.value)) for r in committed] == [(0, b"c0"), (1, b"c1"), (5, b"c2")]
    everything = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
                  .load().selectExpr("offset", "value").collect())
    assert [bytes(r.value) for r in everything] == [b"c0", b"c1", b"a0", b"c2", b"o0"]
