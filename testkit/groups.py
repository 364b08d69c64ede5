"""Consumers as applications run them: each polled in its own thread (or process).

`open_consumer` gives one small consumer per client library (kafka-python, confluent-kafka,
aiokafka) with the same few calls, so a scenario can run once per client. Underneath each
is the client's own API and semantics: its own errors, its own commit and reset behaviour.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time

import aiokafka
import aiokafka.errors
import confluent_kafka
import kafka
import kafka.errors
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

CLIENTS = ("kafka-python", "confluent-kafka", "aiokafka")

# Short enough for quick tests, as a developer would set them against a local broker.
SESSION_TIMEOUT_MS = 6000
HEARTBEAT_INTERVAL_MS = 1000
GROUP_BROKER_CONFIG = {
    "offsets.topic.num.partitions": 10,
    # Consumers started together land in one rebalance instead of one each.
    "group.initial.rebalance.delay.ms": 300,
}


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()


def produce(bootstrap: str, topic: str, values: list[str], partitions: int | None = None) -> None:
    """Send values in order; with `partitions`, value i goes to partition i % partitions."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    for i, value in enumerate(values):
        producer.send(topic, value.encode(), partition=None if partitions is None else i % partitions)
    producer.flush()
    producer.close()


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


class GroupConsumer:
    """One consumer of one topic in a group, subscribed (or, with subscribe=False, assigned by
    hand). Not thread-safe: a test calls it from one thread. Values are decoded strings;
    partitions are numbers of `topic`; a committed offset is the next offset to read."""

    topic: str

    def poll(self, max_records: int, timeout: float) -> list[str]:
        """One poll of the client: at most max_records values, waiting up to timeout seconds."""
        raise NotImplementedError

    def assignment(self) -> set[int]:
        raise NotImplementedError

    def positioned(self) -> bool:
        """Whether every assigned partition has a fetch position (committed or reset)."""
        raise NotImplementedError

    def assign(self, partitions: list[int]) -> None:
        raise NotImplementedError

    def commit(self, offsets: dict[int, int], metadata: str = "") -> None:
        """A synchronous commit of these offsets, as a member of the group if subscribed."""
        raise NotImplementedError

    def committed(self, partition: int) -> int | None:
        raise NotImplementedError

    def close(self) -> None:
        """Closes as the client does: LeaveGroup, and a last commit if auto-commit is on."""
        raise NotImplementedError

    @staticmethod
    def sent_metadata(metadata: str) -> str:
        """The metadata string the client puts in OffsetCommit for `metadata`."""
        return metadata

    @staticmethod
    def is_no_offset_error(exc: BaseException) -> bool:
        """Whether poll raised the client's error for auto.offset.reset=none without an offset."""
        raise NotImplementedError

    def consume(self, count: int, timeout: float = 15) -> list[str]:
        """Polls until `count` values arrived (never more) or the deadline passed."""
        got: list[str] = []
        deadline = time.monotonic() + timeout
        while len(got) < count and time.monotonic() < deadline:
            got += self.poll(count - len(got), 0.5)
        return got

    def wait_positioned(self, timeout: float = 15) -> list[str]:
        """Polls until the consumer has an assignment and a position on each partition of it;
        returns what it read meanwhile."""
        got: list[str] = []
        deadline = time.monotonic() + timeout
        while not (self.assignment() and self.positioned()):
            assert time.monotonic() < deadline, "no assignment with positions"
            got += self.poll(500, 0.2)
        return got


class KafkaPythonConsumer(GroupConsumer):
    def __init__(self, bootstrap, topic, group, *, subscribe=True, auto_offset_reset="earliest",
                 enable_auto_commit=False, auto_commit_interval_ms=5000):
        self.topic = topic
        self.consumer = group_consumer(bootstrap, topic if subscribe else None, group,
                                       auto_offset_reset=auto_offset_reset, enable_auto_commit=enable_auto_commit,
                                       auto_commit_interval_ms=auto_commit_interval_ms)

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


class ConfluentConsumer(GroupConsumer):
    """librdkafka: heartbeats from its own thread; auto.offset.reset=none is spelled 'error'."""

    def __init__(self, bootstrap, topic, group, *, subscribe=True, auto_offset_reset="earliest",
                 enable_auto_commit=False, auto_commit_interval_ms=5000):
        self.topic = topic
        self.consumer = confluent_kafka.Consumer({
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "error" if auto_offset_reset == "none" else auto_offset_reset,
            "enable.auto.commit": enable_auto_commit,
            "auto.commit.interval.ms": auto_commit_interval_ms,
            "session.timeout.ms": SESSION_TIMEOUT_MS,
            "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
            # position() stays unknown until a record is consumed; the end-of-partition event
            # is how a consumer reset to latest learns it has a position.
            "enable.partition.eof": True,
        })
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


class AiokafkaConsumer(GroupConsumer):
    """aiokafka on its own event loop, running in a thread for the consumer's lifetime so that
    it heartbeats between calls, as in an asyncio application."""

    def __init__(self, bootstrap, topic, group, *, subscribe=True, auto_offset_reset="earliest",
                 enable_auto_commit=False, auto_commit_interval_ms=5000):
        self.topic = topic
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        settings = dict(bootstrap_servers=bootstrap, group_id=group, auto_offset_reset=auto_offset_reset,
                        enable_auto_commit=enable_auto_commit, auto_commit_interval_ms=auto_commit_interval_ms,
                        session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS)
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


_CONSUMERS = {"kafka-python": KafkaPythonConsumer, "confluent-kafka": ConfluentConsumer, "aiokafka": AiokafkaConsumer}


def open_consumer(client: str, bootstrap: str, topic: str, group: str, **settings) -> GroupConsumer:
    """settings: subscribe, auto_offset_reset (earliest, latest, none), enable_auto_commit,
    auto_commit_interval_ms."""
    return _CONSUMERS[client](bootstrap, topic, group, **settings)


class PolledConsumer:
    """A consumer polled in its own thread, as an application runs it; all client calls stay in it."""

    def __init__(self, bootstrap: str, topic: str, group: str, client: str = "kafka-python", **settings):
        self._consumer = open_consumer(client, bootstrap, topic, group, **settings)
        self._values: list[str] = []
        self.assignment: set[int] = set()
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        try:
            while not self._stop.is_set():
                self._values.extend(self._consumer.poll(500, 0.2))
                self.assignment = self._consumer.assignment()
        except BaseException as exc:  # surfaced by close()
            self.error = exc
        finally:
            self._consumer.close()  # commits what was consumed when auto-commit is on

    def close(self) -> None:
        self._stop.set()
        self._thread.join(30)
        if self.error is not None:
            raise self.error

    def values(self) -> list[str]:
        return list(self._values)


_CONSUMER_PROCESS = """
import sys
sys.path.insert(0, sys.argv[1])
from testkit.groups import open_consumer
consumer = open_consumer(*sys.argv[2:])
while True:
    consumer.poll(500, 0.2)
    print("assigned", sorted(consumer.assignment()), flush=True)
"""


class ConsumerProcess:
    """A consumer in a child process, so a test can SIGKILL it mid-session: no LeaveGroup,
    no more heartbeats, whatever threads the client runs."""

    def __init__(self, bootstrap: str, topic: str, group: str, client: str = "kafka-python"):
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository root
        self.process = subprocess.Popen(
            [sys.executable, "-c", _CONSUMER_PROCESS, here, client, bootstrap, topic, group],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        self.assignment: list[int] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            if line.startswith("assigned"):
                self.assignment = json.loads(line.split(" ", 1)[1])

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
