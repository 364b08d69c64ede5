"""Compaction in a running broker: the cleaner task keeps the latest value per key in closed
segments, with every codec, drops tombstones after delete.retention.ms, and a config change
through the admin client takes effect at once."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

from trafka.testing.waiting import wait_until
from testkit.kafka_python import admin_client, read_all

CLEANER = {"log.cleaner.backoff.ms": 100}
COMPACT = {
    "cleanup.policy": "compact",
    "segment.bytes": "2000",
    "min.cleanable.dirty.ratio": "0.01",
    "delete.retention.ms": "1500",
}


def produce(bootstrap, topic, items, compression=None, timestamp_ms=None):
    # batch_size below segment.bytes: an append larger than a segment is refused (as in Kafka).
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", compression_type=compression, linger_ms=20,
                             batch_size=1500)
    for key, value in items:
        producer.send(topic, key=key, value=value, partition=0, timestamp_ms=timestamp_ms)
    producer.flush()
    producer.close()


def latest_per_key(items):
    latest = {}
    for offset, (key, value) in enumerate(items):
        latest[key] = (offset, value)
    return latest


@pytest.mark.trafka_config(CLEANER)
@pytest.mark.parametrize("compression", [None, "gzip", "snappy", "lz4", "zstd"])
def test_the_cleaner_keeps_the_latest_value_per_key(trafka_broker, compression):
    bootstrap = trafka_broker.bootstrap_servers
    admin = admin_client(bootstrap)
    admin.create_topics([NewTopic("table", 1, 1, topic_configs={**COMPACT, "segment.ms": "1000"})])
    admin.close()
    items = [(b"user-%d" % (i % 10), b"v%03d-" % i + b"x" * 40) for i in range(300)]
    produce(bootstrap, "table", items, compression)
    # segment.ms rolls the segment at the closing write; the new active segment is never cleaned.
    # Rolls compare the records' own timestamps, so a record 2 s ahead rolls without waiting.
    produce(bootstrap, "table", [(b"user-0", b"final")], compression, timestamp_ms=int(time.time() * 1000) + 2000)

    def compacted():
        records = read_all(bootstrap, "table")
        return records if len(records) <= 12 else None

    records = wait_until(compacted, 15, "the cleaner to compact the closed segments")
    expected = latest_per_key(items + [(b"user-0", b"final")])
    got = {r.key: (r.offset, r.value) for r in records}
    # Offsets never change; every key's latest record survives, in offset order.
    assert [r.offset for r in records] == sorted(r.offset for r in records)
    assert all(got[key] == expected[key] for key in expected if key != b"user-0")
    assert got[b"user-0"] == (300, b"final")
    assert records[-1].offset == 300


@pytest.mark.trafka_config(CLEANER)
def test_tombstones_go_after_delete_retention_ms_and_policy_changes_apply_at_once(trafka_broker):
    bootstrap = trafka_broker.bootstrap_servers
    admin = admin_client(bootstrap)
    admin.create_topics([NewTopic("users", 1, 1, topic_configs={"segment.bytes": "300"})])  # delete policy
    produce(bootstrap, "users", [(b"a", b"1"), (b"b", b"1"), (b"a", b"2")])
    assert len(read_all(bootstrap, "users")) == 3
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "users", configs={
        "cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "1500"})])
    for key, value in [(b"b", None), (b"c", b"1"), (b"c", b"2")]:  # one batch each, so segments roll
        produce(bootstrap, "users", [(key, value)])
    produce(bootstrap, "users", [(b"z", b"active")])

    def keys_and_values():
        return [(r.key, r.value) for r in read_all(bootstrap, "users")]

    wait_until(lambda: keys_and_values() == [(b"a", b"2"), (b"b", None), (b"c", b"2"), (b"z", b"active")], 10,
               "compaction that keeps the tombstone")
    wait_until(lambda: keys_and_values() == [(b"a", b"2"), (b"c", b"2"), (b"z", b"active")], 10,
               "the tombstone to go after delete.retention.ms")
    admin.close()


@pytest.mark.trafka_config({**CLEANER, "log.cleaner.enable": "false"})
def test_log_cleaner_enable_false_leaves_compacted_topics_alone(trafka_broker):
    bootstrap = trafka_broker.bootstrap_servers
    admin = admin_client(bootstrap)
    admin.create_topics([NewTopic("kept", 1, 1, topic_configs={**COMPACT, "segment.bytes": "200"})])
    admin.close()
    for i in range(6):
        produce(bootstrap, "kept", [(b"k", b"%d" % i)])
    # Many cleaner intervals of broker time: advance_clock runs every check it makes due before
    # it returns, so an enabled cleaner would have compacted by now (as the tests above show).
    trafka_broker.advance_clock(60_000)
    assert len(read_all(bootstrap, "kept")) == 6
