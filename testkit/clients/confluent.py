"""confluent-kafka (librdkafka): every adapter trafka's tests use for it, in one place."""

from __future__ import annotations

import time
import uuid

import confluent_kafka

from testkit.clients.base import (
    Auth, CREATE_TIME, Got, GroupConsumer, HEARTBEAT_INTERVAL_MS, LOG_APPEND_TIME, Msg, SESSION_TIMEOUT_MS, TIMEOUT_S,
    TxnFailed, headers_tuple, Reading,
)


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
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "compat-unused",
                             "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        try:
            consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
            return self._poll(consumer, count)
        finally:
            consumer.close()

    @staticmethod
    def _poll(consumer, count: int) -> list[Got]:
        """Up to `count` records (fewer if TIMEOUT_S passes first); a consumer error fails the test."""
        from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME

        out: list[Got] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(out) < count and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is None:
                continue
            if m.error():
                raise AssertionError(f"confluent-kafka consumer error: {m.error()}")
            ts_type, ts = m.timestamp()
            out.append(Got(m.offset(), m.key(), m.value(), headers_tuple(m.headers()), ts,
                           LOG_APPEND_TIME if ts_type == TIMESTAMP_LOG_APPEND_TIME else CREATE_TIME))
        return out

    def group_consume(self, topic: str, group: str, count: int) -> list[Got]:
        from confluent_kafka import Consumer

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group,
                             "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        try:
            consumer.subscribe([topic])
            out = self._poll(consumer, count)
            consumer.commit(asynchronous=False)
            return out
        finally:
            consumer.close()


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


def read_values_confluent(bootstrap, topic, isolation, until, count, quiet_s=None):
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{uuid.uuid4().hex[:8]}",
                  "isolation.level": isolation, "enable.auto.commit": False})
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        values, reading = [], Reading(until, count, quiet_s)
        while reading.goes_on(values):
            m = c.poll(0.3)
            if m is not None and m.error() is None:
                values.append(m.value())
        return values
    finally:
        c.close()


class ConfluentConsumer(GroupConsumer):
    """librdkafka: heartbeats from its own thread; auto.offset.reset=none is spelled 'error'."""

    def __init__(self, bootstrap, topic, group, *, subscribe=True, auto_offset_reset="earliest",
                 enable_auto_commit=False, auto_commit_interval_ms=5000, session_timeout_ms=SESSION_TIMEOUT_MS,
                 group_protocol="classic"):
        self.topic = topic
        config = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "error" if auto_offset_reset == "none" else auto_offset_reset,
            "enable.auto.commit": enable_auto_commit,
            "auto.commit.interval.ms": auto_commit_interval_ms,
            # position() stays unknown until a record is consumed; the end-of-partition event
            # is how a consumer reset to latest learns it has a position.
            "enable.partition.eof": True,
        }
        if group_protocol == "classic":
            config.update({"session.timeout.ms": session_timeout_ms, "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS})
        else:  # KIP-848: the broker sets the session and the heartbeat interval
            config["group.protocol"] = group_protocol
        self.consumer = confluent_kafka.Consumer(config)
        self._fetched: set[int] = set()  # partitions that delivered a record or reached their end
        if subscribe:
            self.consumer.subscribe([topic], on_assign=self._forget_fetched, on_revoke=self._forget_fetched)

    def _forget_fetched(self, consumer, partitions):
        self._fetched.clear()

    def poll(self, max_records, timeout):
        values = []
        for message in self.consumer.consume(num_messages=max_records, timeout=timeout):
            error = message.error()
            if error is not None and error.code() != confluent_kafka.KafkaError._PARTITION_EOF:
                raise confluent_kafka.KafkaException(error)
            self._fetched.add(message.partition())
            if error is None:
                values.append(message.value().decode())
        return values

    def assignment(self):
        return {tp.partition for tp in self.consumer.assignment()}

    def positioned(self):
        return self.assignment() <= self._fetched

    def assign(self, partitions):
        self.consumer.assign([confluent_kafka.TopicPartition(self.topic, p) for p in partitions])

    def commit(self, offsets, metadata=""):
        extra = {"metadata": metadata} if metadata else {}  # none: no metadata, as an application leaves it
        self.consumer.commit(offsets=[confluent_kafka.TopicPartition(self.topic, p, o, **extra)
                                      for p, o in offsets.items()], asynchronous=False)

    @staticmethod
    def sent_metadata(metadata):
        # confluent-kafka-python passes strlen + 1 bytes to librdkafka, so the NUL goes on the wire.
        return metadata + "\0" if metadata else metadata

    def committed(self, partition):
        [tp] = self.consumer.committed([confluent_kafka.TopicPartition(self.topic, partition)], timeout=10)
        return None if tp.offset == confluent_kafka.OFFSET_INVALID else tp.offset

    def close(self):
        self.consumer.close()

    @staticmethod
    def is_no_offset_error(exc):
        return (isinstance(exc, confluent_kafka.KafkaException)
                and exc.args[0].code() == confluent_kafka.KafkaError._AUTO_OFFSET_RESET)


def confluent_config(auth: Auth) -> dict:
    config = {"security.protocol": auth.protocol}
    if auth.mechanism:
        config["sasl.mechanisms"] = auth.mechanism
        if auth.mechanism == "OAUTHBEARER":
            config["sasl.oauthbearer.config"] = f"principal={auth.user}"
            config["enable.sasl.oauthbearer.unsecure.jwt"] = True
        else:
            config.update({"sasl.username": auth.user, "sasl.password": auth.password})
    if auth.ca:
        config["ssl.ca.location"] = str(auth.ca)
    if auth.cert:
        config.update({"ssl.certificate.location": str(auth.cert), "ssl.key.location": str(auth.key)})
    return config


def roundtrip_confluent(bootstrap: str, auth: Auth) -> bytes:
    from confluent_kafka import Consumer, Producer

    topic = f"sec-{uuid.uuid4().hex[:8]}"
    config = {"bootstrap.servers": bootstrap, **confluent_config(auth)}
    producer = Producer(config)
    errors = []
    producer.produce(topic, topic.encode(), on_delivery=lambda err, msg: errors.append(err))
    assert producer.flush(30) == 0 and errors == [None], errors
    consumer = Consumer({**config, "group.id": topic, "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        for _ in range(30):
            message = consumer.poll(1)
            if message is not None and not message.error():
                return message.value()
        raise AssertionError("no record came back")
    finally:
        consumer.close()


def upsert_scram(bootstrap: str, user: str, password: str, mechanism: str, **auth) -> None:
    from confluent_kafka.admin import (AdminClient, ScramCredentialInfo, ScramMechanism,
                                       UserScramCredentialUpsertion)

    admin = AdminClient({"bootstrap.servers": bootstrap, **auth})
    info = ScramCredentialInfo(getattr(ScramMechanism, mechanism.replace("-", "_")), 4096)
    futures = admin.alter_user_scram_credentials([UserScramCredentialUpsertion(user, info, password.encode())])
    for future in futures.values():
        future.result(30)


def confluent_login_errors(bootstrap: str, auth: Auth, principal_claim: str | None = None) -> list[str]:
    """The errors librdkafka reports while it tries to log in (error_cb runs inside poll).
    `principal_claim`: an OAUTHBEARER token that names its principal in this claim instead of sub."""
    from confluent_kafka import Producer

    errors: list[str] = []
    config = confluent_config(auth)
    if principal_claim:
        config["sasl.oauthbearer.config"] = f"principal={auth.user} principalClaimName={principal_claim}"
    producer = Producer({"bootstrap.servers": bootstrap, **config,
                         "error_cb": lambda e: errors.append(str(e))})
    deadline = time.monotonic() + 10
    while not errors and time.monotonic() < deadline:
        producer.poll(0.2)
    return errors


def produce_confluent(bootstrap: str, auth: Auth, topic: str, value: bytes) -> str | None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 15000, **confluent_config(auth)})
    errors = []
    producer.produce(topic, value, on_delivery=lambda err, msg: errors.append(err))
    producer.flush(30)
    if not errors:
        return "NO_DELIVERY_REPORT"
    # (never compare a KafkaError with ==: its comparison with None leaves a Python error set)
    return None if errors[0] is None else errors[0].name()


def consume_confluent(bootstrap: str, auth: Auth, topic: str, group: str) -> bytes | str:
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                         **confluent_config(auth)})
    try:
        consumer.subscribe([topic])
        for _ in range(40):
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error():
                return message.error().name()
            return message.value()
        return "NO_RECORD"
    finally:
        consumer.close()
