"""Transactional producers and isolation-aware readers for every client of the matrix, behind
one small interface, so tests/transactions scenarios run unchanged over each client.

`producer(request, name, bootstrap, transactional_id, **settings)` returns a `TxnProducer`:
init() begin() send(topic, value) flush() commit() abort()
send_offsets(topic, partition, offset, group) close(). A client-side failure raises
`TxnFailed(client, error name)`.

`read_values(request, name, bootstrap, topic, isolation, until=..., count=...)` reads
partition 0 from the beginning with isolation "read_committed" or "read_uncommitted" until the
value `until` arrives or `count` values did, or TIMEOUT_S passed; returns the values in order.
"""

from __future__ import annotations

import asyncio
import time
import uuid

TIMEOUT_S = 20


class TxnFailed(Exception):
    def __init__(self, client: str, error: str):
        super().__init__(f"{client}: {error}")
        self.error = error


def _done(values, until, count) -> bool:
    return (until is not None and until in values) or (count is not None and len(values) >= count)


# --- kafka-python -------------------------------------------------------------------------


class KafkaPythonTxn:
    def __init__(self, bootstrap, transactional_id, timeout_ms):
        from kafka import KafkaProducer

        self.p = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=transactional_id,
                               transaction_timeout_ms=timeout_ms, max_block_ms=TIMEOUT_S * 1000)

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except Exception as exc:  # the client's own exception types
            raise TxnFailed("kafka-python", type(exc).__name__) from exc

    def init(self):
        self._call(self.p.init_transactions)

    def begin(self):
        self._call(self.p.begin_transaction)

    def send(self, topic, value):
        self._call(lambda: self.p.send(topic, value=value, partition=0))

    def flush(self):
        self._call(self.p.flush, TIMEOUT_S)

    def commit(self):
        self._call(self.p.commit_transaction)

    def abort(self):
        self._call(self.p.abort_transaction)

    def send_offsets(self, topic, partition, offset, group):
        from kafka import TopicPartition
        from kafka.structs import OffsetAndMetadata

        self._call(self.p.send_offsets_to_transaction, {TopicPartition(topic, partition): OffsetAndMetadata(offset, "", -1)}, group)

    def close(self):
        try:
            self.p.close(timeout=5)
        except Exception:  # a fenced producer reports its fatal error again
            pass


def _kafka_python_read(bootstrap, topic, isolation, until, count):
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                      auto_offset_reset="earliest")
    try:
        c.assign([TopicPartition(topic, 0)])
        c.seek_to_beginning()
        values, deadline = [], time.monotonic() + TIMEOUT_S
        while not _done(values, until, count) and time.monotonic() < deadline:
            for records in c.poll(timeout_ms=300).values():
                values += [r.value for r in records]
        return values
    finally:
        c.close()


# --- confluent-kafka ----------------------------------------------------------------------


class ConfluentTxn:
    def __init__(self, bootstrap, transactional_id, timeout_ms):
        from confluent_kafka import Producer

        self.bootstrap = bootstrap
        self.p = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                           "transaction.timeout.ms": timeout_ms})

    def _call(self, fn, *args):
        from confluent_kafka import KafkaException

        try:
            return fn(*args)
        except KafkaException as exc:
            raise TxnFailed("confluent-kafka", exc.args[0].name()) from exc

    def init(self):
        self._call(self.p.init_transactions, TIMEOUT_S)

    def begin(self):
        self._call(self.p.begin_transaction)

    def send(self, topic, value):
        self._call(lambda: self.p.produce(topic, value=value, partition=0))

    def flush(self):
        self.p.flush(TIMEOUT_S)

    def commit(self):
        self._call(self.p.commit_transaction, TIMEOUT_S)

    def abort(self):
        self._call(self.p.abort_transaction, TIMEOUT_S)

    def send_offsets(self, topic, partition, offset, group):
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group})
        try:
            self._call(self.p.send_offsets_to_transaction, [TopicPartition(topic, partition, offset)],
                       consumer.consumer_group_metadata(), TIMEOUT_S)
        finally:
            consumer.close()

    def close(self):
        try:
            self.p.flush(5)
        except Exception:  # a fenced producer reports its fatal error again
            pass


def _confluent_read(bootstrap, topic, isolation, until, count):
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{uuid.uuid4().hex[:8]}",
                  "isolation.level": isolation, "enable.auto.commit": False})
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        values, deadline = [], time.monotonic() + TIMEOUT_S
        while not _done(values, until, count) and time.monotonic() < deadline:
            m = c.poll(0.3)
            if m is not None and m.error() is None:
                values.append(m.value())
        return values
    finally:
        c.close()


# --- aiokafka -----------------------------------------------------------------------------


class AiokafkaTxn:
    def __init__(self, bootstrap, transactional_id, timeout_ms):
        from aiokafka import AIOKafkaProducer

        self.loop = asyncio.new_event_loop()

        async def make():
            return AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=transactional_id,
                                    transaction_timeout_ms=timeout_ms)

        self.p = self.loop.run_until_complete(make())
        self.pending = []

    def _run(self, coro):
        try:
            return self.loop.run_until_complete(asyncio.wait_for(coro, TIMEOUT_S))
        except Exception as exc:
            raise TxnFailed("aiokafka", type(exc).__name__) from exc

    def init(self):
        self._run(self.p.start())

    def begin(self):
        self._run(self.p.begin_transaction())

    def send(self, topic, value):
        self.pending.append(self._run(self.p.send(topic, value=value, partition=0)))

    def flush(self):
        self._run(self.p.flush())

    def commit(self):
        self._run(self.p.commit_transaction())

    def abort(self):
        self._run(self.p.abort_transaction())

    def send_offsets(self, topic, partition, offset, group):
        from aiokafka import TopicPartition

        self._run(self.p.send_offsets_to_transaction({TopicPartition(topic, partition): offset}, group))

    def close(self):
        try:
            self.loop.run_until_complete(asyncio.wait_for(self.p.stop(), 10))
        except Exception:  # a fenced producer may fail to stop cleanly; the test already checked it
            pass
        self.loop.close()


def _aiokafka_read(bootstrap, topic, isolation, until, count):
    async def read():
        from aiokafka import AIOKafkaConsumer, TopicPartition

        c = AIOKafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                             auto_offset_reset="earliest")
        await c.start()
        try:
            tp = TopicPartition(topic, 0)
            c.assign([tp])
            await c.seek_to_beginning(tp)
            values, deadline = [], time.monotonic() + TIMEOUT_S
            while not _done(values, until, count) and time.monotonic() < deadline:
                batches = await c.getmany(tp, timeout_ms=300)
                values += [r.value for r in batches.get(tp, [])]
            return values
        finally:
            await c.stop()

    return asyncio.run(asyncio.wait_for(read(), TIMEOUT_S + 10))


# --- Java kafka-clients -------------------------------------------------------------------


class JavaTxn:
    def __init__(self, kafka, bootstrap, transactional_id, timeout_ms):
        self.kafka = kafka
        self.p = kafka.make_producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                                      "transaction.timeout.ms": timeout_ms, "max.block.ms": TIMEOUT_S * 1000})

    def _call(self, fn, *args):
        from testkit.java import KafkaJavaError

        try:
            return self.kafka.call(fn, *args)
        except KafkaJavaError as exc:
            raise TxnFailed(f"java-{self.kafka.version}", exc.simple_name) from exc

    def init(self):
        self._call(self.p.j.initTransactions)

    def begin(self):
        self._call(self.p.j.beginTransaction)

    def send(self, topic, value):
        self._call(lambda: self.p.send_async(topic, None, value, None, 0))

    def flush(self):
        self._call(self.p.j.flush)

    def commit(self):
        self._call(self.p.j.commitTransaction)

    def abort(self):
        self._call(self.p.j.abortTransaction)

    def send_offsets(self, topic, partition, offset, group):
        jvm = self.kafka.jvm
        offsets = jvm.java.util.HashMap()
        offsets.put(self.kafka.tp(topic, partition), jvm.org.apache.kafka.clients.consumer.OffsetAndMetadata(int(offset)))
        metadata = jvm.org.apache.kafka.clients.consumer.ConsumerGroupMetadata(group)
        self._call(self.p.j.sendOffsetsToTransaction, offsets, metadata)

    def close(self):
        try:
            self.p.close()
        except Exception:  # closing a fenced producer may report the fencing again
            pass


def _java_read(kafka, bootstrap, topic, isolation, until, count):
    c = kafka.make_consumer({"bootstrap.servers": bootstrap, "isolation.level": isolation, "enable.auto.commit": "false"})
    try:
        c.assign([(topic, 0)])
        c.seekToBeginning()
        values, deadline = [], time.monotonic() + TIMEOUT_S
        while not _done(values, until, count) and time.monotonic() < deadline:
            values += [r.value for r in c.poll(300)]
        return values
    finally:
        c.close()


# --- dispatch -----------------------------------------------------------------------------

JAVA_FIXTURES = {"java-3.9.1": "java_client_39", "java-4.3.0": "java_client_43"}
CLIENTS = ["kafka-python", "confluent-kafka", "aiokafka", *JAVA_FIXTURES]


def producer(request, name: str, bootstrap: str, transactional_id: str, timeout_ms: int = 60000):
    if name == "kafka-python":
        made = KafkaPythonTxn(bootstrap, transactional_id, timeout_ms)
    elif name == "confluent-kafka":
        made = ConfluentTxn(bootstrap, transactional_id, timeout_ms)
    elif name == "aiokafka":
        made = AiokafkaTxn(bootstrap, transactional_id, timeout_ms)
    else:
        made = JavaTxn(request.getfixturevalue(JAVA_FIXTURES[name]), bootstrap, transactional_id, timeout_ms)
    request.addfinalizer(made.close)
    return made


def read_values(request, name: str, bootstrap: str, topic: str, isolation: str, *, until: bytes | None = None,
                count: int | None = None) -> list[bytes]:
    if name == "kafka-python":
        return _kafka_python_read(bootstrap, topic, isolation, until, count)
    if name == "confluent-kafka":
        return _confluent_read(bootstrap, topic, isolation, until, count)
    if name == "aiokafka":
        return _aiokafka_read(bootstrap, topic, isolation, until, count)
    return _java_read(request.getfixturevalue(JAVA_FIXTURES[name]), bootstrap, topic, isolation, until, count)
