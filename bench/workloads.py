"""The workloads, each run against one broker with one client; bounded in count and time."""

from __future__ import annotations

import statistics
import threading
import time
import uuid
from functools import partial

DEADLINE_SECONDS = 120
STALL_SECONDS = 15
WARM_UP = b"warm-up"  # a consumer that gets nothing for this long has failed the workload


def _topic(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _create_topic(bootstrap: str, partitions: int) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    name = _topic("bench")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
    # Wait until the topic is visible with all its partitions (some brokers lag).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        topics = admin.list_topics(name, timeout=5).topics
        if name in topics and len(topics[name].partitions) == partitions and topics[name].error is None:
            return name
        time.sleep(0.05)
    raise RuntimeError(f"topic {name} did not appear")


def produce_all(producer, topic: str, payload: bytes, count: int, partitions: int) -> None:
    """`count` records round-robin over the partitions through a confluent-kafka Producer,
    waiting out a full queue, until every one is acknowledged (TimeoutError past DEADLINE_SECONDS)."""
    started = time.perf_counter()
    for i in range(count):
        while True:
            try:
                producer.produce(topic, payload, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.005)
        if time.perf_counter() - started > DEADLINE_SECONDS:
            raise TimeoutError("produce took too long")
    if producer.flush(DEADLINE_SECONDS) != 0:
        raise TimeoutError("produce did not finish")


def confluent_throughput(broker, count: int, size: int, partitions: int, partition_fetch_bytes: int = 1048576,
                         **consumer_config) -> dict:
    """Produce `count` messages of `size` bytes, then consume them all by assignment (the
    consumer's settings as given, librdkafka's defaults otherwise)."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    topic = _create_topic(broker.bootstrap, partitions)
    payload = b"x" * size
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5, "message.max.bytes": max(1_000_000, size * 2)})
    cpu0, started = broker.cpu_seconds(), time.perf_counter()
    produce_all(producer, topic, payload, count, partitions)
    produce_s, produce_cpu = time.perf_counter() - started, broker.cpu_seconds() - cpu0

    consumer = Consumer({
        "bootstrap.servers": broker.bootstrap,
        "group.id": "bench",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "fetch.max.bytes": 52428800,
        "max.partition.fetch.bytes": max(partition_fetch_bytes, size * 4),
        **consumer_config,
    })
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    received = 0
    cpu0, started = broker.cpu_seconds(), time.perf_counter()
    progressed = started
    while received < count and time.perf_counter() - started < DEADLINE_SECONDS:
        got = sum(1 for m in consumer.consume(10000, 0.5) if m.error() is None)
        received += got
        if got:
            progressed = time.perf_counter()
        elif time.perf_counter() - progressed > STALL_SECONDS:
            break
    consume_s, consume_cpu = time.perf_counter() - started, broker.cpu_seconds() - cpu0
    consumer.close()
    if received < count:
        raise TimeoutError(f"consumed {received} of {count}")
    return {
        "produce_msgs_per_s": count / produce_s,
        "consume_msgs_per_s": count / consume_s,
        "produce_broker_cpu_s": produce_cpu,
        "consume_broker_cpu_s": consume_cpu,
        "rss_after_mb": broker.rss_mb(),
    }


def kafka_python_throughput(broker, count: int, size: int) -> dict:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    topic = _create_topic(broker.bootstrap, 1)
    payload = b"x" * size
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=5, batch_size=65536)
    cpu0, started = broker.cpu_seconds(), time.perf_counter()
    for _ in range(count):
        producer.send(topic, payload)
    producer.flush(DEADLINE_SECONDS)
    produce_s, produce_cpu = time.perf_counter() - started, broker.cpu_seconds() - cpu0
    producer.close()

    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False, max_poll_records=10000, fetch_max_bytes=52428800)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek(tp, 0)
    received = 0
    cpu0, started = broker.cpu_seconds(), time.perf_counter()
    while received < count and time.perf_counter() - started < DEADLINE_SECONDS:
        received += sum(len(v) for v in consumer.poll(500).values())
    consume_s, consume_cpu = time.perf_counter() - started, broker.cpu_seconds() - cpu0
    consumer.close()
    if received < count:
        raise TimeoutError(f"consumed {received} of {count}")
    return {
        "produce_msgs_per_s": count / produce_s,
        "consume_msgs_per_s": count / consume_s,
        "produce_broker_cpu_s": produce_cpu,
        "consume_broker_cpu_s": consume_cpu,
    }


def _percentile(values: list[float], q: float) -> float:
    """The q-th percentile, q to a tenth (99.9: the 999th of 1000 quantiles)."""
    return statistics.quantiles(values, n=1000, method="inclusive")[round(q * 10) - 1]


def latency(broker, count: int = 1000, rate_per_s: int = 200) -> dict:
    """acks=all produce acknowledgement, and produce-to-consume delivery with a long poll."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    topic = _create_topic(broker.bootstrap, 1)
    consumer = Consumer({
        "bootstrap.servers": broker.bootstrap,
        "group.id": "bench-latency",
        "enable.auto.commit": False,
        "fetch.wait.max.ms": 500,
        "fetch.min.bytes": 1,
    })
    consumer.assign([TopicPartition(topic, 0, 0)])
    delivered: list[float] = []
    done, warm = threading.Event(), threading.Event()

    def consume():
        deadline = time.monotonic() + DEADLINE_SECONDS
        while len(delivered) < count and time.monotonic() < deadline:
            # poll() hands over each message as it arrives; consume(n, t) would wait to fill n.
            m = consumer.poll(0.1)
            if m is None or m.error() is not None:
                continue
            if m.value() == WARM_UP:
                warm.set()
            else:
                delivered.append(time.perf_counter() - float(m.value()))
        done.set()

    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0, "acks": "all"})
    # Connections, metadata and the consumer's first Fetch answer first, so the first measured
    # message is like the others (a broker's first request of a kind may pay one-off costs).
    producer.produce(topic, WARM_UP)
    producer.flush(30)
    warm.wait(DEADLINE_SECONDS)
    acked: list[float] = []
    interval = 1 / rate_per_s
    next_send = time.perf_counter()
    for _ in range(count):
        sent = time.perf_counter()
        producer.produce(topic, repr(sent).encode(), on_delivery=lambda err, msg, s=sent: acked.append(time.perf_counter() - s))
        producer.poll(0)
        next_send += interval
        while time.perf_counter() < next_send:
            producer.poll(max(0.0, next_send - time.perf_counter()))
    producer.flush(30)
    done.wait(DEADLINE_SECONDS)
    consumer.close()
    ms = lambda values, q: _percentile(values, q) * 1000  # noqa: E731
    figures = {
        "ack_p50_ms": ms(acked, 50),
        "ack_p99_ms": ms(acked, 99),
        "delivery_p50_ms": ms(delivered, 50),
        "delivery_p99_ms": ms(delivered, 99),
    }
    if count >= 5000:  # enough samples for the 99.9th percentile to be a 5th-worst, not a max
        figures.update({"ack_p999_ms": ms(acked, 99.9), "delivery_p999_ms": ms(delivered, 99.9)})
    return figures


def wide_read(broker, client: str, partitions: int, count: int = 400_000, size: int = 100, reads: int = 3) -> dict:
    """One consumer of `client` (confluent-kafka, kafka-python, aiokafka) reads `count` records
    spread over `partitions` partitions, assigned, from the start (issue #26's wide reads). The
    records are written first with confluent-kafka, so only the read differs between clients.
    The same records are read `reads` times, each by a new consumer, and the median read counts:
    one read varies by up to 40% from run to run on a 2-core machine, and librdkafka's reads are
    bimodal (a read that meets its fetch.queue.backoff.ms takes a second longer)."""
    from confluent_kafka import Producer

    topic = _create_topic(broker.bootstrap, partitions)
    payload = b"x" * size
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
    for i in range(count):
        while True:
            try:
                producer.produce(topic, payload, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.005)
    if producer.flush(DEADLINE_SECONDS) != 0:
        raise TimeoutError("produce did not finish")
    read = {"confluent-kafka": _read_confluent, "kafka-python": _read_kafka_python, "aiokafka": _read_aiokafka,
            "confluent-kafka, fetch.queue.backoff.ms=0": partial(_read_confluent, **{"fetch.queue.backoff.ms": 0})}[client]
    rates, cpus = [], []
    for _ in range(reads):
        cpu0, started = broker.cpu_seconds(), time.perf_counter()
        received = read(broker.bootstrap, topic, partitions, count)
        rates.append(count / (time.perf_counter() - started))
        cpus.append(broker.cpu_seconds() - cpu0)
        if received < count:
            raise TimeoutError(f"consumed {received} of {count}")
    return {"consume_msgs_per_s": statistics.median(rates), "consume_broker_cpu_s": statistics.median(cpus)}


def _read_confluent(bootstrap: str, topic: str, partitions: int, count: int, **config) -> int:
    """With fetch.queue.backoff.ms=0 (a variant) librdkafka does not stop fetching for a second
    once its queue holds queued.min.messages: the rate the broker can feed (docs/performance.md)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "wide", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", **config})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    received, started = 0, time.perf_counter()
    try:
        while received < count and time.perf_counter() - started < DEADLINE_SECONDS:
            received += sum(1 for m in consumer.consume(10000, 0.5) if m.error() is None)
    finally:
        consumer.close()
    return received


def _read_kafka_python(bootstrap: str, topic: str, partitions: int, count: int) -> int:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, max_poll_records=10000)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    received, started = 0, time.perf_counter()
    try:
        while received < count and time.perf_counter() - started < DEADLINE_SECONDS:
            received += sum(len(v) for v in consumer.poll(500).values())
    finally:
        consumer.close()
    return received


def _read_aiokafka(bootstrap: str, topic: str, partitions: int, count: int) -> int:
    import asyncio

    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def read() -> int:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest")
        await consumer.start()
        try:
            tps = [TopicPartition(topic, p) for p in range(partitions)]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            received, started = 0, time.perf_counter()
            while received < count and time.perf_counter() - started < DEADLINE_SECONDS:
                batches = await consumer.getmany(timeout_ms=500, max_records=10000)
                received += sum(len(v) for v in batches.values())
            return received
        finally:
            await consumer.stop()

    return asyncio.run(read())
