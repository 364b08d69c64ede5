"""aiokafka: every adapter trafka's tests use for it, in one place (each call runs its
own event loop, so tests stay synchronous)."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

import aiokafka
import aiokafka.errors

from testkit.clients.base import (
    Auth, CREATE_TIME, Got, GroupConsumer, HEARTBEAT_INTERVAL_MS, LOG_APPEND_TIME, Msg, SESSION_TIMEOUT_MS, TIMEOUT_S,
    TxnFailed, headers_tuple, kafka_error_name, Reading,
)


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
                out += [Got(r.offset, r.key, r.value, headers_tuple(r.headers), r.timestamp,
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
                    out += [Got(r.offset, r.key, r.value, headers_tuple(r.headers), r.timestamp) for r in records]
            await consumer.commit()
            return out
        finally:
            await consumer.stop()


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
        for delivery in self.pending:  # a fenced producer's sends fail with it too: read, so that
            if delivery.done() and not delivery.cancelled():  # asyncio does not report them at exit
                delivery.exception()
        self.loop.close()


def read_values_aiokafka(bootstrap, topic, isolation, until, count, quiet_s=None):
    async def read():
        from aiokafka import AIOKafkaConsumer, TopicPartition

        c = AIOKafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                             auto_offset_reset="earliest")
        await c.start()
        try:
            tp = TopicPartition(topic, 0)
            c.assign([tp])
            await c.seek_to_beginning(tp)
            values, reading = [], Reading(until, count, quiet_s)
            while reading.goes_on(values):
                batches = await c.getmany(tp, timeout_ms=300)
                values += [r.value for r in batches.get(tp, [])]
            return values
        finally:
            await c.stop()

    return asyncio.run(asyncio.wait_for(read(), TIMEOUT_S + 10))


class AiokafkaConsumer(GroupConsumer):
    """aiokafka on its own event loop, running in a thread for the consumer's lifetime so that
    it heartbeats between calls, as in an asyncio application."""

    def __init__(self, bootstrap, topic, group, *, subscribe=True, auto_offset_reset="earliest",
                 enable_auto_commit=False, auto_commit_interval_ms=5000, session_timeout_ms=SESSION_TIMEOUT_MS):
        self.topic = topic
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        settings = dict(bootstrap_servers=bootstrap, group_id=group, auto_offset_reset=auto_offset_reset,
                        enable_auto_commit=enable_auto_commit, auto_commit_interval_ms=auto_commit_interval_ms,
                        session_timeout_ms=session_timeout_ms, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS)
        self.consumer = self._run(self._start(*([topic] if subscribe else []), **settings))

    def _run(self, coroutine, timeout: float = 30):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    @staticmethod
    async def _start(*topics, **settings) -> aiokafka.AIOKafkaConsumer:
        consumer = aiokafka.AIOKafkaConsumer(*topics, **settings)  # binds to the running loop
        await consumer.start()
        return consumer

    async def _call(self, method, *args):
        return method(*args)

    def poll(self, max_records, timeout):
        batches = self._run(self.consumer.getmany(timeout_ms=int(timeout * 1000), max_records=max_records))
        return [r.value.decode() for batch in batches.values() for r in batch]

    def assignment(self):
        return {tp.partition for tp in self._run(self._call(self.consumer.assignment))}

    def positioned(self):
        async def positions():
            for tp in self.consumer.assignment():
                await self.consumer.position(tp)

        try:
            self._run(asyncio.wait_for(positions(), 0.5))
        except TimeoutError:
            return False
        return True

    def assign(self, partitions):
        self._run(self._call(self.consumer.assign, [aiokafka.TopicPartition(self.topic, p) for p in partitions]))

    def commit(self, offsets, metadata=""):
        self._run(self.consumer.commit({aiokafka.TopicPartition(self.topic, p): aiokafka.structs.OffsetAndMetadata(o, metadata)
                                        for p, o in offsets.items()}))

    def committed(self, partition):
        return self._run(self.consumer.committed(aiokafka.TopicPartition(self.topic, partition)))

    def close(self):
        try:
            self._run(self.consumer.stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()

    @staticmethod
    def is_no_offset_error(exc):
        return isinstance(exc, aiokafka.errors.NoOffsetForPartitionError)


def aiokafka_config(auth: Auth) -> dict:
    from aiokafka.helpers import create_ssl_context

    config = {"security_protocol": auth.protocol}
    if auth.mechanism == "OAUTHBEARER":
        from testkit.oauth_tokens import aiokafka_provider

        config.update(sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=aiokafka_provider(auth.token))
    elif auth.mechanism:
        config.update(sasl_mechanism=auth.mechanism, sasl_plain_username=auth.user, sasl_plain_password=auth.password)
    if auth.ca:
        config["ssl_context"] = create_ssl_context(
            cafile=str(auth.ca), certfile=str(auth.cert) if auth.cert else None,
            keyfile=str(auth.key) if auth.key else None)
    return config


def aiokafka_login_refused(bootstrap: str, auth: Auth) -> None:
    """Start an aiokafka producer as `auth` and send one record: its login must be refused (a
    KafkaError from start() or, when its bootstrap request was answered with an error before the
    connection closed, from the send); an AssertionError if it connects."""
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import KafkaError

    async def start() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=5000, **aiokafka_config(auth))
        try:
            await producer.start()
            await producer.send_and_wait("login-check", b"")
        finally:
            await producer.stop()

    try:
        asyncio.run(start())
    except KafkaError:
        return
    raise AssertionError(f"aiokafka logged in as {auth.user} ({auth.mechanism}); it should have been refused")


def roundtrip_aiokafka(bootstrap: str, auth: Auth) -> bytes:
    async def run() -> bytes:
        from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

        topic = f"sec-{uuid.uuid4().hex[:8]}"
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, **aiokafka_config(auth))
        await producer.start()
        try:
            await producer.send_and_wait(topic, topic.encode())
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                    **aiokafka_config(auth))
        await consumer.start()
        try:
            message = await asyncio.wait_for(consumer.getone(), 20)
            return message.value
        finally:
            await consumer.stop()

    return asyncio.run(run())


def produce_aiokafka(bootstrap: str, auth: Auth, topic: str, value: bytes) -> str | None:
    async def run():
        from aiokafka import AIOKafkaProducer
        from aiokafka.errors import KafkaError

        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=15000, **aiokafka_config(auth))
        await producer.start()
        try:
            await producer.send_and_wait(topic, value)
            return None
        except KafkaError as exc:
            return kafka_error_name(exc)
        finally:
            await producer.stop()

    return asyncio.run(run())


def consume_aiokafka(bootstrap: str, auth: Auth, topic: str, group: str) -> bytes | str:
    async def run():
        from aiokafka import AIOKafkaConsumer
        from aiokafka.errors import KafkaError

        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                                    **aiokafka_config(auth))
        try:
            await consumer.start()
            for _ in range(40):
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    if records:
                        return records[0].value
            return "NO_RECORD"
        except KafkaError as exc:
            return kafka_error_name(exc)
        finally:
            await consumer.stop()

    return asyncio.run(run())
