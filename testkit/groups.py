"""Consumers as applications run them: each polled in its own thread (or process).

`open_consumer` gives one small consumer per client library (kafka-python, confluent-kafka,
aiokafka) with the same few calls, so a scenario can run once per client. Underneath each
is the client's own API and semantics: its own errors, its own commit and reset behaviour
(each client's consumer lives with its other adapters in testkit/clients/<client>.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic

from testkit.clients.aiokafka import AiokafkaConsumer
from testkit.clients.base import HEARTBEAT_INTERVAL_MS, SESSION_TIMEOUT_MS, GroupConsumer
from testkit.clients.confluent import ConfluentConsumer
from testkit.clients.kafka_python import KafkaPythonConsumer, group_consumer

__all__ = ["CLIENTS", "GROUP_BROKER_CONFIG", "HEARTBEAT_INTERVAL_MS", "SESSION_TIMEOUT_MS", "ConsumerProcess", "GroupConsumer",
           "PolledConsumer", "create_topic", "group_consumer", "open_consumer", "produce"]

CLIENTS = ("kafka-python", "confluent-kafka", "aiokafka")

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


def share_from_earliest(bootstrap: str, group: str) -> None:
    """share.auto.offset.reset=earliest for a share group (a GROUP config, IncrementalAlterConfigs
    through confluent-kafka's admin client), so its first fetch starts at the log start."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until its futures are done
    change = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([change]).values():
        future.result(20)


def produce(bootstrap: str, topic: str, values: list[str], partitions: int | None = None) -> None:
    """Send values in order; with `partitions`, value i goes to partition i % partitions."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    for i, value in enumerate(values):
        producer.send(topic, value.encode(), partition=None if partitions is None else i % partitions)
    producer.flush()
    producer.close()


_CONSUMERS = {"kafka-python": KafkaPythonConsumer, "confluent-kafka": ConfluentConsumer, "aiokafka": AiokafkaConsumer}


def open_consumer(client: str, bootstrap: str, topic: str, group: str, **settings) -> GroupConsumer:
    """settings: subscribe, auto_offset_reset (earliest, latest, none), enable_auto_commit,
    auto_commit_interval_ms, session_timeout_ms."""
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
consumer = open_consumer(*sys.argv[2:6], session_timeout_ms=int(sys.argv[6]))
while True:
    consumer.poll(500, 0.2)
    print("assigned", sorted(consumer.assignment()), flush=True)
"""


class ConsumerProcess:
    """A consumer in a child process, so a test can SIGKILL it mid-session: no LeaveGroup,
    no more heartbeats, whatever threads the client runs."""

    def __init__(self, bootstrap: str, topic: str, group: str, client: str = "kafka-python", *,
                 session_timeout_ms: int = SESSION_TIMEOUT_MS):
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository root
        self.process = subprocess.Popen(
            [sys.executable, "-c", _CONSUMER_PROCESS, here, client, bootstrap, topic, group, str(session_timeout_ms)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        self.assignment: list[int] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            kind, _, payload = line.partition(" ")
            if kind != "assigned" or not payload.strip():
                continue
            try:
                self.assignment = json.loads(payload)
            except ValueError:
                pass  # the last line, cut short by the SIGKILL

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
