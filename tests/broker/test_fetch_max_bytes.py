"""The broker's `fetch.max.bytes` bounds a whole Fetch answer, as Kafka's does (KIP-74): the
smaller of it and the request's max_bytes, the first batch of the first partition with data
whole even when larger. The default is Kafka's, 55 MiB; the tests of the cut set 1 MiB."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.broker.test_produce_fetch_wire import FETCH_V
from trafka.testing.rawwire import RawClient
from trafka.wire import records

PARTITIONS = 4
PER_PARTITION = 3000  # x ~120 B: about 360 KB a partition, 1.4 MB in all
ONE_MIB = {"fetch.max.bytes": 1 << 20}


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


@pytest.mark.trafka_config(ONE_MIB)
def test_the_broker_setting_caps_the_whole_answer(trafka_broker):
    _fill(trafka_broker.bootstrap_servers, "capped")
    sizes = [len(data) for data in _fetch_all(trafka_broker.bootstrap_servers, "capped")]
    assert 1_000_000 < sum(sizes) <= 1 << 20  # (how full depends on the client's batch sizes)
    assert sizes[0] > 300_000 and sizes[-1] == 0  # partitions in the request's order


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


def _write_batches(bootstrap: str, topic: str, batch: bytes, count: int = 1) -> None:
    """`count` copies of one encoded batch on each partition, written as they are (no client
    re-batching), so an answer's shape depends on nothing but these sizes."""
    from testkit.groups import create_topic

    create_topic(bootstrap, topic, PARTITIONS)
    with RawClient(bootstrap, "batches") as client:
        for p in range(PARTITIONS):
            for _ in range(count):
                body = client.request(0, 7, {"transactional_id": None, "acks": -1, "timeout_ms": 10000, "topic_data": [
                    {"name": topic, "partition_data": [{"index": p, "records": batch}]}]})
                assert body.responses[0].partition_responses[0].error_code == 0


def _big_batch() -> bytes:
    batch = records.encode_batch([records.Record(None, b"%06d" % i + b"x" * 994, timestamp=1) for i in range(400)])
    assert 400_000 < len(batch) < 500_000  # two fill 800+ KB of the 1 MiB, a third does not fit
    return batch


@pytest.mark.trafka_config(ONE_MIB)
def test_an_answer_is_a_byte_range_cut_at_the_limit(trafka_broker):
    """Partitions whose first batch fits come as byte ranges: the last one filled to the limit
    and ending inside a batch (the client drops that part and asks again from there)."""
    batch = records.encode_batch([records.Record(None, b"%06d" % i + b"x" * 994, timestamp=1) for i in range(120)])
    _write_batches(trafka_broker.bootstrap_servers, "byte-ranges", batch, count=3)  # ~360 KB a partition
    sizes = [len(data) for data in _fetch_all(trafka_broker.bootstrap_servers, "byte-ranges")]
    assert sizes[:2] == [3 * len(batch)] * 2
    assert sizes[2] == (1 << 20) - 6 * len(batch) and sizes[2] % len(batch) and sizes[3] == 0


@pytest.mark.trafka_config(ONE_MIB)
def test_a_later_partition_whose_first_batch_does_not_fit_gets_no_records(trafka_broker):
    """Kafka's ReplicaManager (Fetch v3+) answers a later partition whose first batch is larger
    than what is left of the answer with no records, not with a cut batch: a client cannot read
    a cut first batch (kafka-python then fails to make progress, aiokafka raises
    RecordTooLargeError). That partition comes first, whole, in a later answer."""
    batch = _big_batch()
    _write_batches(trafka_broker.bootstrap_servers, "big-batches", batch)
    sizes = [len(data) for data in _fetch_all(trafka_broker.bootstrap_servers, "big-batches")]
    assert sizes == [len(batch), len(batch), 0, 0]


@pytest.mark.trafka_config(ONE_MIB)
@pytest.mark.parametrize("client", ["confluent-kafka", "kafka-python", "aiokafka"])
def test_every_client_reads_partitions_of_batches_larger_than_what_is_left(trafka_broker, client):
    batch = _big_batch()
    bootstrap = trafka_broker.bootstrap_servers
    _write_batches(bootstrap, "big-" + client, batch, count=2)
    want = sorted(b"%06d" % i for i in range(400)) * 2 * PARTITIONS
    got = _read_assigned(client, bootstrap, "big-" + client, len(want))
    assert sorted(value[:6] for value in got) == sorted(want)


def _read_assigned(client: str, bootstrap: str, topic: str, want: int) -> list[bytes]:
    """The values of every partition read from offset 0 by assignment, with each client's
    default fetch sizes (1 MiB a partition, 50 MiB an answer, capped by the broker's 1 MiB here)."""
    import time

    deadline = time.monotonic() + 30
    values: list[bytes] = []
    if client == "confluent-kafka":
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "big", "enable.auto.commit": False})
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        try:
            while len(values) < want and time.monotonic() < deadline:
                message = consumer.poll(0.5)
                if message is not None:
                    assert message.error() is None, message.error()
                    values.append(message.value())
        finally:
            consumer.close()
    elif client == "kafka-python":
        from kafka import KafkaConsumer
        from kafka import TopicPartition as KTopicPartition

        consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        consumer.assign([KTopicPartition(topic, p) for p in range(PARTITIONS)])
        consumer.seek_to_beginning()
        try:
            while len(values) < want and time.monotonic() < deadline:
                for messages in consumer.poll(500).values():
                    values.extend(m.value for m in messages)
        finally:
            consumer.close()
    else:
        import asyncio

        from aiokafka import AIOKafkaConsumer
        from aiokafka import TopicPartition as ATopicPartition

        async def read() -> None:
            consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
            await consumer.start()
            try:
                consumer.assign([ATopicPartition(topic, p) for p in range(PARTITIONS)])
                await consumer.seek_to_beginning()
                while len(values) < want and time.monotonic() < deadline:
                    for messages in (await consumer.getmany(timeout_ms=500)).values():
                        values.extend(m.value for m in messages)
            finally:
                await consumer.stop()

        asyncio.run(read())
    return values
