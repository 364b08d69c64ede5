"""The whole process under a seeded nemesis (a simulated cluster of three, every fault kind, one
broker down at most: network partitions, topics made during outages and back-to-back restarts
among them): an idempotent producer, a transactional producer committing and aborting, a
consumer group committing offsets, a share group, schema registrations and a producer writing
to every topic the nemesis makes run through it; after it heals, what they were told is checked against what is there
(trafka.testing.history). Fixed seeds run in `make test`; `make nemesis SEEDS=1,2,3 DURATION=60`
runs longer ones (NEMESIS_SEEDS, NEMESIS_DURATION)."""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.request

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, NewTopic

from testkit.groups import share_from_earliest
from trafka.testing import TrafkaBroker
from trafka.testing.history import History

SEEDS = [int(s) for s in os.environ.get("NEMESIS_SEEDS", "3,17").split(",")]
DURATION_S = float(os.environ.get("NEMESIS_DURATION", "8"))
CONFIG = {"cluster.brokers": 3, "offsets.topic.num.partitions": 3, "transaction.state.log.num.partitions": 3,
          "share.coordinator.state.topic.num.partitions": 3, "default.replication.factor": 3,
          "min.insync.replicas": 2, "group.share.heartbeat.interval.ms": 500}


class Workload:
    """The clients, each on its own thread until `stop` is set, recording into one History."""

    def __init__(self, bootstrap: str, registry: str):
        self.bootstrap, self.registry = bootstrap, registry
        self.history = History()
        self.stop = threading.Event()
        self.stop_sharing = threading.Event()  # the share group goes on until it got everything
        self.registered: dict[int, int] = {}  # schema version -> id answered
        self.made: set[str] = set()  # topics the nemesis made that were written to
        self.shared: set[bytes] = set()  # values the share group got
        self.errors: list[str] = []

    def _recorded_producer(self):
        """An idempotent acks=all producer, and the callback that records what it was told."""
        producer = Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True, "acks": "all",
                             "linger.ms": 5, "message.timeout.ms": 60000})

        def delivered(err, message):
            if err is None:
                self.history.produced(message.topic(), message.partition(), message.offset(), message.value())
        return producer, delivered

    def idempotent_producer(self) -> None:
        producer, delivered = self._recorded_producer()
        i = 0
        while not self.stop.is_set():
            for _ in range(20):
                producer.produce("events", b"e-%d" % i, callback=delivered)
                i += 1
            producer.poll(0.01)
        producer.flush(60)

    def created_topics(self) -> None:
        """Writes, acks=all and idempotent, to every topic the nemesis made (named nemesis-*)."""
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        producer, delivered = self._recorded_producer()
        i = 0
        while not self.stop.is_set():
            try:
                made = sorted(t for t in admin.list_topics(timeout=5).topics if t.startswith("nemesis-"))
            except KafkaException:
                made = []
            for topic in made:
                self.made.add(topic)
                for _ in range(20):
                    producer.produce(topic, b"n-%d" % i, callback=delivered)
                    i += 1
            producer.poll(0.2)
        producer.flush(60)

    def transactional_producer(self) -> None:
        producer = Producer({"bootstrap.servers": self.bootstrap, "transactional.id": "nemesis-txn",
                             "transaction.timeout.ms": 60000})
        producer.init_transactions(60)
        n = 0
        while not self.stop.is_set():
            values, offsets = [b"t-%d-%d" % (n, i) for i in range(10)], []
            producer.begin_transaction()
            for value in values:
                producer.produce("txns", value, callback=lambda err, m: offsets.append(
                    (m.topic(), m.partition(), m.offset(), m.value())) if err is None else None)
            producer.flush(60)
            try:
                if n % 4 == 3:
                    producer.abort_transaction(60)
                    for value in values:
                        self.history.aborted(value)
                else:
                    producer.commit_transaction(60)
                    for entry in offsets:
                        self.history.produced(*entry)
            except KafkaException as exc:  # outcome unknown: neither acknowledged nor aborted
                self.errors.append(f"transaction {n}: {exc}")
                if exc.args[0].txn_requires_abort():
                    producer.abort_transaction(60)
                elif not exc.args[0].retriable():
                    return
            n += 1

    def consumer_group(self) -> None:
        generation = [0]

        def assigned(consumer, partitions):
            generation[0] += 1  # a new assignment may start again from the committed offset
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "nemesis-readers",
                             "auto.offset.reset": "earliest", "enable.auto.commit": False})
        consumer.subscribe(["events"], on_assign=assigned)
        while not self.stop.is_set():
            messages = consumer.consume(500, 0.2)
            for m in messages:
                if m.error() is None:
                    self.history.consumed(f"group-{generation[0]}", m.topic(), m.partition(), m.offset(), m.value())
            if messages:
                try:
                    for tp in consumer.commit(asynchronous=False):
                        if tp.error is None and tp.offset >= 0:
                            self.history.committed("nemesis-readers", tp.topic, tp.partition, tp.offset)
                except KafkaException:
                    pass  # a commit that failed under a fault is not acknowledged
        consumer.close()

    def share_group(self) -> None:
        consumer = ShareConsumer({"bootstrap.servers": self.bootstrap, "group.id": "nemesis-workers"})
        consumer.subscribe(["events"])
        while not self.stop_sharing.is_set():
            for m in consumer.poll(0.3) or []:
                if m.error() is None:
                    self.shared.add(m.value())
        consumer.close()

    def schemas(self) -> None:
        version = 0
        while not self.stop.is_set() and version < 40:
            schema = {"type": "record", "name": "Event", "fields": [{"name": f"f{i}", "type": "int", "default": 0}
                                                                   for i in range(version + 1)]}
            request = urllib.request.Request(f"{self.registry}/subjects/events-value/versions", method="POST",
                                             data=json.dumps({"schema": json.dumps(schema)}).encode(),
                                             headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
            try:
                with urllib.request.urlopen(request, timeout=10) as answer:
                    self.registered[version] = json.loads(answer.read())["id"]
                version += 1
            except OSError:
                time.sleep(0.2)  # refused under a fault: tried again, not acknowledged
            time.sleep(0.2)


def _read_all(bootstrap: str, topic: str, history: History, name: str, **settings) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"final-{name}", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, **settings})
    consumer.subscribe([topic])
    quiet = time.monotonic()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and time.monotonic() - quiet < 4:
        for m in consumer.consume(2000, 0.5):
            if m.error() is None:
                history.consumed(name, m.topic(), m.partition(), m.offset(), m.value())
                quiet = time.monotonic()
    consumer.close()


@pytest.mark.parametrize("seed", SEEDS)
def test_clients_lose_change_and_duplicate_nothing_under_the_nemesis(tmp_path, seed):
    with TrafkaBroker(data_dir=tmp_path / "data", config=CONFIG) as cluster:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        for future in admin.create_topics([NewTopic("events", 3, 3), NewTopic("txns", 3, 3)]).values():
            future.result(20)
        share_from_earliest(cluster.bootstrap_servers, "nemesis-workers")
        work = Workload(cluster.bootstrap_servers, cluster.schema_registry_url.rstrip("/"))
        threads = [threading.Thread(target=getattr(work, name), name=name, daemon=True) for name in
                   ("idempotent_producer", "transactional_producer", "consumer_group", "share_group", "schemas",
                    "created_topics")]
        for thread in threads:
            thread.start()
        report = cluster.nemesis(seed=seed, duration_s=DURATION_S, max_down=1)
        work.stop.set()
        for thread in threads:
            if thread.name != "share_group":
                thread.join(120)
        assert not [t.name for t in threads if t.is_alive() and t.name != "share_group"], "a client did not finish"
        assert report["state"] == "done" and all(b["alive"] for b in cluster.brokers()), report
        assert report["serving"] and all(report["serving"].values()), report["serving"]
        done = [e for e in report["events"] if e["result"] == "done"]
        assert len(done) >= 3, report

        _read_all(cluster.bootstrap_servers, "events", work.history, "final-events")
        _read_all(cluster.bootstrap_servers, "txns", work.history, "final-txns", **{"isolation.level": "read_committed"})
        for topic in sorted(work.made):
            _read_all(cluster.bootstrap_servers, topic, work.history, f"final-{topic}")
        checked = work.history.check(read_committed=True)
        faults = "\n".join(f"{e['at_ms']} {e['planned']} -> {e['target']}: {e['result']}" for e in report["events"])
        assert checked.ok, f"seed {seed}:\n{checked.summary()}\nfaults:\n{faults}"
        assert not checked.unseen, f"seed {seed}: acknowledged records the final read never reached: {checked.unseen[:3]}"
        assert checked.acknowledged > 1000

        # The share group got every acknowledged record of `events` at least once.
        acked = {value for (topic, _, _), value in work.history.acknowledged() if topic == "events"}
        deadline = time.monotonic() + 60
        while not acked <= work.shared and time.monotonic() < deadline:
            time.sleep(0.5)
        work.stop_sharing.set()
        threads[3].join(60)
        assert acked <= work.shared, f"seed {seed}: {len(acked - work.shared)} records the share group never got"

        # Every schema version the registry acknowledged is there, with its id.
        with urllib.request.urlopen(f"{cluster.schema_registry_url.rstrip('/')}/subjects/events-value/versions",
                                    timeout=10) as answer:
            versions = json.loads(answer.read())
        assert len(versions) >= len(work.registered) and work.registered, (versions, work.registered)
