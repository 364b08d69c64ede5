"""Consumers as applications run them: each polled in its own thread (or process)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic

from conftest import HEARTBEAT_INTERVAL_MS, SESSION_TIMEOUT_MS


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


def wait_until(predicate, timeout: float, message: str = "condition") -> float:
    """Seconds it took for predicate() to hold; fails after `timeout`."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"{message} did not happen within {timeout}s")
        time.sleep(0.05)
    return time.monotonic() - start


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


class PolledConsumer:
    """A kafka-python consumer polled in its own thread; all client calls stay in it."""

    def __init__(self, bootstrap: str, topic: str, group: str, **config):
        self.consumer = group_consumer(bootstrap, topic, group, **config)
        self.records = []
        self.assignment: set[int] = set()
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        try:
            while not self._stop.is_set():
                for batch in self.consumer.poll(timeout_ms=500).values():
                    self.records.extend(batch)
                self.assignment = {tp.partition for tp in self.consumer.assignment()}
        except BaseException as exc:  # surfaced by close()
            self.error = exc
        finally:
            self.consumer.close()  # commits what was consumed when auto-commit is on

    def close(self) -> None:
        self._stop.set()
        self._thread.join(30)
        if self.error is not None:
            raise self.error

    def values(self) -> list[str]:
        return [r.value.decode() for r in self.records]


_CONSUMER_PROCESS = """
import sys, time
from kafka import KafkaConsumer
bootstrap, topic, group, session, heartbeat = sys.argv[1:6]
consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                         session_timeout_ms=int(session), heartbeat_interval_ms=int(heartbeat))
while True:
    consumer.poll(timeout_ms=500)
    print("assigned", sorted(tp.partition for tp in consumer.assignment()), flush=True)
"""


class ConsumerProcess:
    """A kafka-python consumer in a child process, so a test can SIGKILL it mid-session."""

    def __init__(self, bootstrap: str, topic: str, group: str):
        self.process = subprocess.Popen(
            [sys.executable, "-c", _CONSUMER_PROCESS, bootstrap, topic, group, str(SESSION_TIMEOUT_MS), str(HEARTBEAT_INTERVAL_MS)],
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
