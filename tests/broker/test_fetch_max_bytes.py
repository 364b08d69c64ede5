"""The broker's `fetch.max.bytes` bounds a whole Fetch answer, as Kafka's does (KIP-74): the
smaller of it and the request's max_bytes, the first batch of the first partition with data
whole even when larger. trafka's default is 1 MiB, not Kafka's 55 MiB (docs/compatibility.md)."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.broker.test_produce_fetch_wire import FETCH_V
from trafka.testing.rawwire import RawClient
from trafka.wire import records

PARTITIONS = 4
PER_PARTITION = 3000  # x ~120 B: about 360 KB a partition, 1.4 MB in all


def _fill(bootstrap: str, topic: str) -> None:
    from testkit.groups import create_topic

    create_topic(bootstrap, topic, PARTITIONS)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(PER_PARTITION * PARTITIONS):
        producer.produce(topic, b"%08d" % i + b"v" * 100, partition=i % PARTITIONS)
    assert producer.flush(30) == 0


def _fetch_all(bootstrap: str, topic: str, max_bytes: int = 50 << 20) -> list[bytes]:
    """One Fetch naming every partition from offset 0 with 1 MiB each: each partition's bytes."""
    with RawClient(bootstrap, "fetch-max-bytes") as client:
        body = client.request(1, FETCH_V, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": max_bytes, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic": topic, "partitions": [
                {"partition": p, "fetch_offset": 0, "partition_max_bytes": 1 << 20} for p in range(PARTITIONS)]}]})
    partitions = sorted(body.responses[0].partitions, key=lambda p: p.partition_index)
    assert all(p.error_code == 0 for p in partitions)
    return [p.records or b"" for p in partitions]


def test_by_default_one_answer_carries_at_most_one_mebibyte(trafka_broker):
    _fill(trafka_broker.bootstrap_servers, "capped")
    sizes = [len(data) for data in _fetch_all(trafka_broker.bootstrap_servers, "capped")]
    assert sum(sizes) == 1 << 20  # the byte range is cut at the limit, the last batch short
    assert sizes[0] > 300_000 and sizes[-1] == 0  # partitions in the request's order


@pytest.mark.trafka_config({"fetch.max.bytes": 57671680})
def test_with_kafkas_default_one_answer_carries_every_partition(trafka_broker):
    _fill(trafka_broker.bootstrap_servers, "kafka-sized")
    sizes = [len(data) for data in _fetch_all(trafka_broker.bootstrap_servers, "kafka-sized")]
    assert all(size > 300_000 for size in sizes) and sum(sizes) > 1 << 20


def test_the_request_max_bytes_still_caps_below_the_broker_setting(trafka_broker):
    _fill(trafka_broker.bootstrap_servers, "asked-less")
    data = _fetch_all(trafka_broker.bootstrap_servers, "asked-less", max_bytes=100_000)
    first = next(records.iter_batches(data[0]))[1].batch_length + 12
    assert sum(map(len, data)) == max(100_000, first)  # or the first batch whole (KIP-74)


@pytest.mark.trafka_config({"fetch.max.bytes": 1024})
def test_the_first_batch_comes_whole_and_a_consumer_reads_everything_in_order(trafka_broker):
    bootstrap = trafka_broker.bootstrap_servers
    _fill(bootstrap, "tiny-answers")
    data = _fetch_all(bootstrap, "tiny-answers")
    first = next(records.iter_batches(data[0]))[1]
    assert len(data[0]) == first.batch_length + 12 > 1024  # one whole batch past the limit (KIP-74)
    assert not any(data[1:])
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "tiny", "enable.auto.commit": False})
    consumer.assign([TopicPartition("tiny-answers", p, 0) for p in range(PARTITIONS)])
    seen: dict[int, list[int]] = {p: [] for p in range(PARTITIONS)}
    try:
        while sum(map(len, seen.values())) < PER_PARTITION * PARTITIONS:
            message = consumer.poll(10)
            assert message is not None and message.error() is None
            seen[message.partition()].append(int(message.value()[:8]))
    finally:
        consumer.close()
    for p, values in seen.items():
        assert values == list(range(p, PER_PARTITION * PARTITIONS, PARTITIONS))


def test_a_later_partition_whose_first_batch_does_not_fit_gets_the_bytes_that_do(trafka_broker):
    """Kafka's byte ranges: only the first partition's first batch comes whole past the limit; a
    later partition whose first batch is larger than what is left gets that many bytes of it
    (the client drops the cut batch and asks again), so the answer is filled to the limit."""
    from testkit.groups import create_topic

    create_topic(trafka_broker.bootstrap_servers, "big-batches", PARTITIONS)
    batch = records.encode_batch([records.Record(None, b"%06d" % i + b"x" * 994, timestamp=1) for i in range(400)])
    assert 400_000 < len(batch) < 500_000  # one batch per partition, two fill 800+ KB of the 1 MiB
    with RawClient(trafka_broker.bootstrap_servers, "big") as client:
        for p in range(PARTITIONS):
            body = client.request(0, 7, {"transactional_id": None, "acks": -1, "timeout_ms": 10000, "topic_data": [
                {"name": "big-batches", "partition_data": [{"index": p, "records": batch}]}]})
            assert body.responses[0].partition_responses[0].error_code == 0
    sizes = [len(data) for data in _fetch_all(trafka_broker.bootstrap_servers, "big-batches")]
    assert sizes[:2] == [len(batch), len(batch)]
    assert sizes[2] == (1 << 20) - 2 * len(batch) and sizes[3] == 0
