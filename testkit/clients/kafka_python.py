"""kafka-python 3.x: every adapter trafka's tests use for it, in one place."""

from __future__ import annotations

import time
import uuid

import kafka
import kafka.errors
from kafka import KafkaConsumer, KafkaProducer
from kafka.structs import OffsetAndMetadata

from testkit.clients.base import (
    Auth, CREATE_TIME, Got, GroupConsumer, HEARTBEAT_INTERVAL_MS, LOG_APPEND_TIME, Msg, SESSION_TIMEOUT_MS, TIMEOUT_S,
    TxnFailed, headers_tuple, kafka_error_name, Reading,
)


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
                    out += [Got(r.offset, r.key, r.value, headers_tuple(r.headers), r.timestamp,
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
                    out += [Got(r.offset, r.key, r.value, headers_tuple(r.headers), r.timestamp) for r in records]
            consumer.commit()
            return out
        finally:
            consumer.close()


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


def read_values_kafka_python(bootstrap, topic, isolation, until, count, quiet_s=None):
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                      auto_offset_reset="earliest")
    try:
        c.assign([TopicPartition(topic, 0)])
        c.seek_to_beginning()
        values, reading = [], Reading(until, count, quiet_s)
        while reading.goes_on(values):
            for records in c.poll(timeout_ms=300).values():
                values += [r.value for r in records]
        return values
    finally:
        c.close()


def group_consumer(bootstrap: str, topic: str | None, group: str, **config) -> KafkaConsumer:
    settings = dict(
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        session_timeout_ms=SESSION_TIMEOUT_MS,
        heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
        enable_auto_commit=False,
    )
    settings.update(config)
    return KafkaConsumer(*([topic] if topic else []), **settings)


class KafkaPythonConsumer(GroupConsumer):
    def __init__(self, bootstrap, topic, group, *, subscribe=True, auto_offset_reset="earliest",
                 enable_auto_commit=False, auto_commit_interval_ms=5000, session_timeout_ms=SESSION_TIMEOUT_MS):
        self.topic = topic
        self.consumer = group_consumer(bootstrap, topic if subscribe else None, group,
                                       auto_offset_reset=auto_offset_reset, enable_auto_commit=enable_auto_commit,
                                       auto_commit_interval_ms=auto_commit_interval_ms,
                                       session_timeout_ms=session_timeout_ms)

    def poll(self, max_records, timeout):
        batches = self.consumer.poll(timeout_ms=int(timeout * 1000), max_records=max_records)
        return [r.value.decode() for batch in batches.values() for r in batch]

    def assignment(self):
        return {tp.partition for tp in self.consumer.assignment()}

    def positioned(self):
        return all(self.consumer.position(tp) is not None for tp in self.consumer.assignment())

    def assign(self, partitions):
        self.consumer.assign([kafka.TopicPartition(self.topic, p) for p in partitions])

    def commit(self, offsets, metadata=""):
        self.consumer.commit({kafka.TopicPartition(self.topic, p): OffsetAndMetadata(o, metadata, -1)
                              for p, o in offsets.items()})

    def committed(self, partition):
        return self.consumer.committed(kafka.TopicPartition(self.topic, partition))

    def close(self):
        self.consumer.close()

    @staticmethod
    def is_no_offset_error(exc):
        return isinstance(exc, kafka.errors.NoOffsetForPartitionError)


def kafka_python_config(auth: Auth) -> dict:
    config = {"security_protocol": auth.protocol}
    if auth.mechanism == "OAUTHBEARER":
        from testkit.oauth_tokens import kafka_python_provider

        config.update(sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=kafka_python_provider(auth.token))
    elif auth.mechanism:
        config.update(sasl_mechanism=auth.mechanism, sasl_plain_username=auth.user, sasl_plain_password=auth.password)
    if auth.ca:
        config.update(ssl_cafile=str(auth.ca), ssl_check_hostname=True)
    if auth.cert:
        config.update(ssl_certfile=str(auth.cert), ssl_keyfile=str(auth.key))
    return config


def kafka_python_login_refused(bootstrap: str, auth: Auth) -> None:
    """Make a kafka-python admin client as `auth`: its login must be refused (a KafkaError within
    1.5 s of bootstrap); an AssertionError if it connects."""
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, **kafka_python_config(auth), bootstrap_timeout_ms=1500)
    except KafkaError:
        return
    admin.close()
    raise AssertionError(f"kafka-python logged in as {auth.user} ({auth.mechanism}); it should have been refused")


def roundtrip_kafka_python(bootstrap: str, auth: Auth) -> bytes:
    from kafka import KafkaConsumer, KafkaProducer

    topic = f"sec-{uuid.uuid4().hex[:8]}"
    value = topic.encode()
    producer = KafkaProducer(bootstrap_servers=bootstrap, **kafka_python_config(auth))
    try:
        producer.send(topic, value).get(timeout=30)
    finally:
        producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=15000, **kafka_python_config(auth))
    try:
        return next(iter(consumer)).value
    finally:
        consumer.close()


def produce_kafka_python(bootstrap: str, auth: Auth, topic: str, value: bytes) -> str | None:
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    producer = KafkaProducer(bootstrap_servers=bootstrap, max_block_ms=10000, **kafka_python_config(auth))
    try:
        producer.send(topic, value).get(timeout=30)
        return None
    except KafkaError as exc:
        return kafka_error_name(exc)
    finally:
        producer.close(timeout=5)


def consume_kafka_python(bootstrap: str, auth: Auth, topic: str, group: str) -> bytes | str:
    from kafka import KafkaConsumer
    from kafka.errors import KafkaError

    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                             **kafka_python_config(auth))
    try:
        for _ in range(40):
            for records in consumer.poll(timeout_ms=500).values():
                return records[0].value
        return "NO_RECORD"
    except KafkaError as exc:
        return kafka_error_name(exc)
    finally:
        consumer.close()
