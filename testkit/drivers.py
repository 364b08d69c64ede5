"""One small driver per client, so cross-client tests can say "written by X, read by Y".

Every driver produces a list of :class:`Msg` to one partition (one producer per call, with the
given compression codec, flushed before returning) and consumes by assign + seek from the start,
returning :class:`Got` in offset order. Every call is bounded by ``TIMEOUT_S``.

kafka-python 3.x and the Java producers are idempotent by default (KIP-679); ``idempotent=True``
turns idempotence on for the others (librdkafka and aiokafka ship with it off).

The per-client test modules use the clients directly as well; the drivers only cover what
every client can do, so they stay small.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from dataclasses import dataclass, field

TIMEOUT_S = 20
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")

CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"


@dataclass(frozen=True)
class Msg:
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...] = ()
    timestamp: int | None = None  # CreateTime in ms; None: the client's clock


@dataclass(frozen=True)
class Got:
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...]
    timestamp: int
    timestamp_type: str = field(default=CREATE_TIME)


def _headers(items) -> tuple[tuple[str, bytes], ...]:
    return tuple((k, bytes(v) if v is not None else None) for k, v in (items or ()))


class KafkaPython:
    name = "kafka-python"

    def __init__(self, bootstrap: str):
        self.bootstrap = bootstrap

    def produce(self, topic: str, msgs: list[Msg], codec: str = "none", partition: int = 0,
                idempotent: bool = False) -> list[int]:
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=self.bootstrap, linger_ms=50,
                                 compression_type=None if codec == "none" else codec)
        try:
            futures = [producer.send(topic, key=m.key, value=m.value, headers=list(m.headers), partition=partition,
                                     timestamp_ms=m.timestamp) for m in msgs]
            return [f.get(timeout=TIMEOUT_S).offset for f in futures]
        finally:
            producer.close(timeout=5)

    def consume(self, topic: str, count: int, partition: int = 0) -> list[Got]:
        from kafka import KafkaConsumer, TopicPartition

        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False,
                                 auto_offset_reset="earliest")
        try:
            tp = TopicPartition(topic, partition)
            consumer.assign([tp])
            consumer.seek_to_beginning(tp)
            out: list[Got] = []
            deadline = time.monotonic() + TIMEOUT_S
            while len(out) < count and time.monotonic() < deadline:
                for records in consumer.poll(timeout_ms=500).values():
                    out += [Got(r.offset, r.key, r.value, _headers(r.headers), r.timestamp,
                                LOG_APPEND_TIME if r.timestamp_type == 1 else CREATE_TIME) for r in records]
            return out
        finally:
            consumer.close()


    def group_consume(self, topic: str, group: str, count: int) -> list[Got]:
        from kafka import KafkaConsumer

        consumer = KafkaConsumer(topic, bootstrap_servers=self.bootstrap, group_id=group, enable_auto_commit=False,
                                 auto_offset_reset="earliest")
        try:
            out: list[Got] = []
            deadline = time.monotonic() + TIMEOUT_S
            while len(out) < count and time.monotonic() < deadline:
                for records in consumer.poll(timeout_ms=500).values():
                    out += [Got(r.offset, r.key, r.value, _headers(r.headers), r.timestamp) for r in records]
            consumer.commit()
            return out
        finally:
            consumer.close()

class Confluent:
    name = "confluent-kafka"

    def __init__(self, bootstrap: str):
        self.bootstrap = bootstrap

    def produce(self, topic: str, msgs: list[Msg], codec: str = "none", partition: int = 0,
                idempotent: bool = False) -> list[int]:
        from confluent_kafka import KafkaException, Producer

        offsets: dict[int, int] = {}
        errors: list = []

        def delivered(index):
            def report(err, msg):
                if err is not None:
                    errors.append(err)
                else:
                    offsets[index] = msg.offset()
            return report

        # Default batching (linger.ms 5); idempotence is off by default in librdkafka.
        producer = Producer({"bootstrap.servers": self.bootstrap, "compression.type": codec,
                             "enable.idempotence": idempotent})
        for i, m in enumerate(msgs):
            producer.produce(topic, value=m.value, key=m.key, partition=partition, headers=list(m.headers) or None,
                             timestamp=m.timestamp or 0, on_delivery=delivered(i))
        left = producer.flush(TIMEOUT_S)
        if errors or left:
            raise KafkaException(errors[0] if errors else f"{left} messages not delivered")
        return [offsets[i] for i in range(len(msgs))]

    def consume(self, topic: str, count: int, partition: int = 0) -> list[Got]:
        from confluent_kafka import OFFSET_BEGINNING, TIMESTAMP_LOG_APPEND_TIME, Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "compat-unused",
                             "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        try:
            consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
            out: list[Got] = []
            deadline = time.monotonic() + TIMEOUT_S
            while len(out) < count and time.monotonic() < deadline:
                m = consumer.poll(0.5)
                if m is None:
                    continue
                if m.error():
                    raise AssertionError(f"confluent-kafka consumer error: {m.error()}")
                ts_type, ts = m.timestamp()
                out.append(Got(m.offset(), m.key(), m.value(), _headers(m.headers()), ts,
                               LOG_APPEND_TIME if ts_type == TIMESTAMP_LOG_APPEND_TIME else CREATE_TIME))
            return out
        finally:
            consumer.close()


    def group_consume(self, topic: str, group: str, count: int) -> list[Got]:
        from confluent_kafka import Consumer

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group,
                             "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        try:
            consumer.subscribe([topic])
            out: list[Got] = []
            deadline = time.monotonic() + TIMEOUT_S
            while len(out) < count and time.monotonic() < deadline:
                m = consumer.poll(0.5)
                if m is None:
                    continue
                if m.error():
                    raise AssertionError(f"confluent-kafka consumer error: {m.error()}")
                out.append(Got(m.offset(), m.key(), m.value(), _headers(m.headers()), m.timestamp()[1]))
            consumer.commit(asynchronous=False)
            return out
        finally:
            consumer.close()

class Aiokafka:
    name = "aiokafka"

    def __init__(self, bootstrap: str):
        self.bootstrap = bootstrap

    def produce(self, topic: str, msgs: list[Msg], codec: str = "none", partition: int = 0,
                idempotent: bool = False) -> list[int]:
        return asyncio.run(asyncio.wait_for(self._produce(topic, msgs, codec, partition, idempotent), TIMEOUT_S))

    async def _produce(self, topic, msgs, codec, partition, idempotent):
        from aiokafka import AIOKafkaProducer

        producer = AIOKafkaProducer(bootstrap_servers=self.bootstrap, linger_ms=20, enable_idempotence=idempotent,
                                    compression_type=None if codec == "none" else codec)
        await producer.start()
        try:
            futures = [await producer.send(topic, key=m.key, value=m.value, partition=partition,
                                           headers=list(m.headers) or None, timestamp_ms=m.timestamp) for m in msgs]
            return [(await f).offset for f in futures]
        finally:
            await producer.stop()

    def consume(self, topic: str, count: int, partition: int = 0) -> list[Got]:
        return asyncio.run(asyncio.wait_for(self._consume(topic, count, partition), TIMEOUT_S + 5))

    async def _consume(self, topic, count, partition):
        from aiokafka import AIOKafkaConsumer, TopicPartition

        consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False,
                                    auto_offset_reset="earliest")
        await consumer.start()
        try:
            tp = TopicPartition(topic, partition)
            consumer.assign([tp])
            await consumer.seek_to_beginning(tp)
            out: list[Got] = []
            deadline = time.monotonic() + TIMEOUT_S
            while len(out) < count and time.monotonic() < deadline:
                batches = await consumer.getmany(tp, timeout_ms=500)
                out += [Got(r.offset, r.key, r.value, _headers(r.headers), r.timestamp,
                            LOG_APPEND_TIME if r.timestamp_type == 1 else CREATE_TIME)
                        for r in batches.get(tp, [])]
            return out
        finally:
            await consumer.stop()


    def group_consume(self, topic: str, group: str, count: int) -> list[Got]:
        return asyncio.run(asyncio.wait_for(self._group_consume(topic, group, count), TIMEOUT_S + 5))

    async def _group_consume(self, topic, group, count):
        from aiokafka import AIOKafkaConsumer

        consumer = AIOKafkaConsumer(topic, bootstrap_servers=self.bootstrap, group_id=group,
                                    enable_auto_commit=False, auto_offset_reset="earliest")
        await consumer.start()
        try:
            out: list[Got] = []
            deadline = time.monotonic() + TIMEOUT_S
            while len(out) < count and time.monotonic() < deadline:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    out += [Got(r.offset, r.key, r.value, _headers(r.headers), r.timestamp) for r in records]
            await consumer.commit()
            return out
        finally:
            await consumer.stop()

class Kcat:
    """kcat (librdkafka 2.0.2). Produces one message per line, so keys and values are text
    without tabs or newlines; headers apply to every message of one call; no timestamps."""

    name = "kcat"

    def __init__(self, bootstrap: str, path: str = "kcat"):
        self.bootstrap = bootstrap
        self.path = path

    def run(self, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
        result = subprocess.run([self.path, "-b", self.bootstrap, "-m", "10", *args], input=input,
                                capture_output=True, timeout=TIMEOUT_S)
        if result.returncode != 0:
            raise AssertionError(f"kcat {' '.join(args)} failed ({result.returncode}): {result.stderr.decode()}")
        return result

    def produce(self, topic: str, msgs: list[Msg], codec: str = "none", partition: int = 0,
                idempotent: bool = False) -> list[int]:
        headers = {m.headers for m in msgs}
        if len(headers) != 1 or any(m.timestamp is not None or m.key is None or m.value is None for m in msgs):
            raise ValueError("kcat produces text keys and values with one header set per call, no timestamps")
        args = ["-P", "-t", topic, "-p", str(partition), "-K", "\t", "-z", codec]
        if idempotent:
            args += ["-X", "enable.idempotence=true"]
        for k, v in next(iter(headers)):
            args += ["-H", f"{k}={v.decode()}"]
        lines = b"".join(m.key + b"\t" + m.value + b"\n" for m in msgs)
        self.run(*args, input=lines)
        return []  # kcat does not report offsets

    def consume(self, topic: str, count: int, partition: int = 0) -> list[Got]:
        out = self.run("-C", "-t", topic, "-p", str(partition), "-o", "beginning", "-e", "-c", str(count), "-J")
        return self._parse(out.stdout)

    @staticmethod
    def _parse(stdout: bytes) -> list[Got]:
        got = []
        for line in stdout.decode().splitlines():
            m = json.loads(line)
            hs = m.get("headers") or []
            headers = tuple((hs[i], None if hs[i + 1] is None else hs[i + 1].encode()) for i in range(0, len(hs), 2))
            enc = (lambda s: None if s is None else s.encode())
            got.append(Got(m["offset"], enc(m["key"]), enc(m["payload"]), headers, m["ts"],
                           LOG_APPEND_TIME if m["tstype"] == "logappend" else CREATE_TIME))
        return got


    def group_consume(self, topic: str, group: str, count: int) -> list[Got]:
        """kcat -G: a balanced consumer; offsets are committed (auto-commit) when it exits."""
        # Not -o: in -G mode it would override the committed offsets on every assignment.
        out = self.run("-G", group, "-X", "auto.offset.reset=earliest", "-e", "-c", str(count), "-J", topic)
        return self._parse(out.stdout)

class Java:
    """Java kafka-clients through the py4j harness; `kafka` is a JavaKafka."""

    def __init__(self, bootstrap: str, kafka):
        self.bootstrap = bootstrap
        self.kafka = kafka
        self.name = f"java-{kafka.version}"

    def produce(self, topic: str, msgs: list[Msg], codec: str = "none", partition: int = 0,
                idempotent: bool = False) -> list[int]:
        producer = self.kafka.make_producer({"bootstrap.servers": self.bootstrap, "compression.type": codec,
                                             "linger.ms": 20, "delivery.timeout.ms": TIMEOUT_S * 1000,
                                             "request.timeout.ms": 10000})
        try:
            futures = [producer.send_async(topic, m.key, m.value, list(m.headers), partition, m.timestamp) for m in msgs]
            return [f.get(TIMEOUT_S).offset for f in futures]
        finally:
            producer.close()

    def consume(self, topic: str, count: int, partition: int = 0) -> list[Got]:
        consumer = self.kafka.make_consumer({"bootstrap.servers": self.bootstrap, "enable.auto.commit": "false"})
        try:
            consumer.assign([(topic, partition)])
            consumer.seekToBeginning()
            return [Got(r.offset, r.key, r.value, _headers(r.headers), r.timestamp, r.timestamp_type)
                    for r in consumer.poll_until(count, timeout_s=TIMEOUT_S)]
        finally:
            consumer.close()

    def group_consume(self, topic: str, group: str, count: int) -> list[Got]:
        consumer = self.kafka.make_consumer({"bootstrap.servers": self.bootstrap, "group.id": group,
                                             "enable.auto.commit": "false"})
        try:
            consumer.subscribe([topic])
            got = consumer.poll_until(count, timeout_s=TIMEOUT_S)
            consumer.commitSync()
            return [Got(r.offset, r.key, r.value, _headers(r.headers), r.timestamp) for r in got]
        finally:
            consumer.close()
