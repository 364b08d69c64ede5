"""Kafka Connect 4.3 distributed workers and Debezium 3.6.3's PostgreSQL connector against trafka
(docs/connect.md).

Each test starts its own broker (or simulated cluster) and its own workers: JVMs of
testkit/connect_worker/TrafkaConnectWorker.java, a DistributedHerder built as ConnectDistributed
builds it, without the Jetty REST server the wheel's jars cannot start (testkit/connect.py). Two
workers form one group with Connect's default protocol (sessioned: incremental cooperative
rebalancing with signed requests to the leader). Waits are bounded waits on what the workers
report or the topics hold; every worker, broker and PostgreSQL server is stopped at the end.
"""

from __future__ import annotations

import json
import threading

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from testkit import connect
from testkit.cluster import read_from_start
from trafka.testing.waiting import wait_until

pytestmark = pytest.mark.timeout(180)

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


@pytest.fixture
def workers(tmp_path):
    """start(bootstrap, count, **worker settings) -> [ConnectWorker], started side by side; all
    of them are stopped (killed if they do not stop) when the test ends."""
    reason = connect.unavailable_reason()
    if reason:
        pytest.skip(reason)
    started: list[connect.ConnectWorker] = []

    def start(bootstrap: str, count: int, **settings) -> list[connect.ConnectWorker]:
        props = connect.worker_properties(bootstrap, **settings)
        batch = [connect.ConnectWorker(tmp_path / "connect", f"worker{len(started) + i + 1}", props) for i in range(count)]
        started.extend(batch)
        errors: list[BaseException] = []

        def run(worker):
            try:
                worker.start()
            except BaseException as exc:  # reported below, in the test's thread
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(worker,)) for worker in batch]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        return batch

    yield start
    for worker in started:
        worker.terminate()
    for worker in started:
        worker.wait(timeout=15)


@pytest.fixture
def postgres():
    if connect.postgres_bin() is None:
        pytest.skip("PostgreSQL is not installed (`python -m testkit.setup_deps` runs apt-get install postgresql as root)")
    server = connect.PostgresServer()
    try:
        yield server.start()
    finally:
        server.stop()


def append_lines(path, start: int, stop: int) -> None:
    with open(path, "a") as f:
        f.writelines(f"line-{i}\n" for i in range(start, stop))


def sink_lines(path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def wait_for_sink(path, want: int, timeout: float = 60) -> list[str]:
    """The sink file's lines once it holds `want`; then it must hold exactly line-0 .. line-<want-1>."""
    wait_until(lambda: len(sink_lines(path)) >= want, timeout, lambda: f"{want} lines in the sink, it has {len(sink_lines(path))}")
    lines = sink_lines(path)
    assert len(lines) == want and set(lines) == {f"line-{i}" for i in range(want)}, (
        f"{len(lines)} lines, {len(set(lines))} distinct: duplicates or lost lines")
    return lines


def topic_configs(bootstrap: str, topics: list[str]) -> dict[str, dict[str, str]]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, t) for t in topics])
    return {resource.name: {name: entry.value for name, entry in future.result(10).items()}
            for resource, future in futures.items()}


def create_topic(bootstrap: str, name: str, partitions: int = 1, replication: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, replication)])[name].result(10)


def committed_at_end(bootstrap: str, group: str, topic: str, partitions: int) -> bool:
    """Whether `group` has committed every partition of `topic` up to its end."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        committed = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=5)
        return all(tp.offset == consumer.get_watermark_offsets(tp, timeout=5)[1] for tp in committed)
    finally:
        consumer.close()


def source_offset(bootstrap: str, offsets_topic: str, connector: str) -> int | None:
    """The file position the offsets topic last holds for `connector`'s file (None: none yet)."""
    position = None
    for key, value in read_records(bootstrap, offsets_topic):
        if value is not None and json.loads(key)[0] == connector:
            position = json.loads(value)["position"]
    return position


def read_records(bootstrap: str, topic: str, timeout: float = 5) -> list[tuple[bytes, bytes]]:
    """Every record of every partition of `topic`, as (key, value), read up to the end."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "connect-test-reader", "enable.auto.commit": False})
    try:
        partitions = consumer.list_topics(topic, timeout=timeout).topics[topic].partitions
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)[1] for p in partitions}
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        positions = dict.fromkeys(partitions, 0)
        records = []
        while any(positions[p] < ends[p] for p in partitions):
            message = consumer.poll(timeout)
            assert message is not None, f"{topic}: no records before the end"
            if message.error() is None:
                records.append((message.key(), message.value()))
                positions[message.partition()] = message.offset() + 1
        return records
    finally:
        consumer.close()


def test_file_pipeline_two_workers_restarts_and_a_killed_worker(trafka_broker, workers, tmp_path):
    bootstrap = trafka_broker.bootstrap_servers
    first, second = workers(bootstrap, 2)

    # Connect creates its three internal topics itself, compacted (it refuses to run on others).
    internal = ["connect-cluster-configs", "connect-cluster-offsets", "connect-cluster-status"]
    configs = wait_until(lambda: set(internal) <= set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=5).topics)
                         and topic_configs(bootstrap, internal), 30, "Connect's internal topics")
    assert {t: c["cleanup.policy"] for t, c in configs.items()} == dict.fromkeys(internal, "compact")

    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    create_topic(bootstrap, "lines", partitions=2)
    append_lines(source, 0, 2000)
    first.put_connector("file-source", {"connector.class": FILE_SOURCE, "file": source, "topic": "lines", "tasks.max": 1})
    second.put_connector("file-sink", {"connector.class": FILE_SINK, "file": sink, "topics": "lines", "tasks.max": 1})
    wait_for_sink(sink, 2000)

    # A worker restart: the worker running the source task stops cleanly and comes back.
    tasks = wait_until(lambda: first.running_tasks("file-source"), 30, "the source task")
    restarting = first if tasks[0] == first.worker_id else second
    restarting.stop()
    append_lines(source, 2000, 3000)
    restarting.start()
    wait_for_sink(sink, 3000)

    # A broker restart under both workers, with lines on their way through it.
    append_lines(source, 3000, 3500)
    trafka_broker.restart()
    append_lines(source, 3500, 4000)
    wait_for_sink(sink, 4000)

    # A worker killed: once the pipeline is at rest (the sink committed up to the end, the source's
    # position stored), kill -9 the worker running the sink task; its work moves to the other.
    wait_until(lambda: committed_at_end(bootstrap, "connect-file-sink", "lines", 2)
               and source_offset(bootstrap, "connect-cluster-offsets", "file-source") == source.stat().st_size,
               30, "the pipeline at rest")
    sink_task = wait_until(lambda: first.running_tasks("file-sink"), 30, "the sink task")[0]
    victim, survivor = (first, second) if sink_task == first.worker_id else (second, first)
    victim.kill()
    wait_until(lambda: survivor.running_tasks("file-sink") == {0: survivor.worker_id}
               and survivor.running_tasks("file-source") == {0: survivor.worker_id}
               and all(survivor.status(c)["connector"]["worker_id"] == survivor.worker_id for c in ("file-source", "file-sink")),
               40, "the killed worker's connectors and tasks on the survivor")
    append_lines(source, 4000, 5000)
    wait_for_sink(sink, 5000)
    # Connect's default protocol, sessioned: incremental cooperative rebalancing, signed requests;
    # two connectors on two workers, so one ran on a follower, which sent its task configs to the leader.
    assert "with protocol version 2 and got assignment" in survivor.log_path.read_text()
    requests = first.internal_requests() + second.internal_requests()
    assert any(r.endswith("/tasks 204") for r in requests), requests


def test_exactly_once_source_with_a_worker_killed_mid_transaction(trafka_broker, workers, tmp_path):
    bootstrap = trafka_broker.bootstrap_servers
    first, second = workers(bootstrap, 2, **{"exactly.once.source.support": "enabled"})
    source = tmp_path / "in.txt"
    create_topic(bootstrap, "eos-lines")
    total = 30000
    append_lines(source, 0, total)
    # A second exactly-once connector first, so that the two workers run one connector each: the
    # one on the follower asks the leader to fence its tasks' zombies (PUT /connectors/x/fence).
    first.put_connector("eos-side", {"connector.class": FILE_SOURCE, "file": tmp_path / "side.txt", "topic": "eos-side",
                                     "tasks.max": 1, "exactly.once.support": "required"})
    wait_until(lambda: first.running_tasks("eos-side"), 30, "the side connector's task")
    first.put_connector("eos-source", {
        "connector.class": FILE_SOURCE, "file": source, "topic": "eos-lines", "tasks.max": 1,
        "exactly.once.support": "required", "transaction.boundary": "interval",
        "transaction.boundary.interval.ms": 3000, "batch.size": 500,
    })

    # Kill -9 the worker running the task while its transaction holds records (log end beyond
    # the last stable offset); transactions last 3 s, the kill comes well within the first.
    task_worker = wait_until(lambda: first.running_tasks("eos-source"), 30, "the source task")[0]
    victim, survivor = (first, second) if task_worker == first.worker_id else (second, first)
    uncommitted = Consumer({"bootstrap.servers": bootstrap, "group.id": "eos-u", "isolation.level": "read_uncommitted"})
    committed = Consumer({"bootstrap.servers": bootstrap, "group.id": "eos-c", "isolation.level": "read_committed"})
    tp = TopicPartition("eos-lines", 0)
    try:
        wait_until(lambda: uncommitted.get_watermark_offsets(tp, timeout=5, cached=False)[1]
                   > committed.get_watermark_offsets(tp, timeout=5, cached=False)[1], 60, "an open transaction with records")
        victim.kill()
    finally:
        uncommitted.close()
        committed.close()

    # The survivor fences the dead worker's producer, aborts its transaction and goes on from the
    # offsets committed with the last transaction: read_committed sees every line exactly once.
    wait_until(lambda: survivor.running_tasks("eos-source") == {0: survivor.worker_id}, 60, "the task on the survivor")
    append_lines(source, total, total + 1000)
    values = read_from_start(bootstrap, "eos-lines", 1, total + 1000, timeout=60, settle=1.0, **{"isolation.level": "read_committed"})
    assert len(values) == total + 1000
    assert set(values) == {f"line-{i}".encode() for i in range(total + 1000)}
    raw = read_from_start(bootstrap, "eos-lines", 1, total + 1001, timeout=5, **{"isolation.level": "read_uncommitted"})
    assert len(raw) > total + 1000, "the killed transaction's records are in the log, aborted"
    requests = first.internal_requests() + second.internal_requests()
    assert any(r.endswith("/fence 204") for r in requests), requests


def test_debezium_postgres_cdc(trafka_broker, postgres, workers):
    bootstrap = trafka_broker.bootstrap_servers
    postgres.sql("CREATE TABLE items (id int PRIMARY KEY, name text); ALTER TABLE items REPLICA IDENTITY FULL; "
                 "INSERT INTO items VALUES (1, 'one'), (2, 'two');")
    json_converter = {"key.converter": "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "false",
                      "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"}
    (worker,) = workers(bootstrap, 1, **json_converter)
    worker.put_connector("pg", {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "database.hostname": "127.0.0.1", "database.port": postgres.port, "database.user": "postgres",
        "database.password": "unused", "database.dbname": "postgres", "topic.prefix": "pg",
        "plugin.name": "pgoutput", "slot.name": "trafka", "publication.autocreate.mode": "filtered",
        "table.include.list": "public.items", "tasks.max": 1,
    })
    topic = "pg.public.items"

    def events(want: int) -> list[tuple[dict | None, dict | None]]:
        def read():
            try:
                records = read_records(bootstrap, topic)
            except Exception:  # the topic is not there yet
                return None
            return len(records) >= want and records
        records = wait_until(read, 60, f"{want} change events on {topic}")
        return [(json.loads(k) if k else None, json.loads(v) if v else None) for k, v in records]

    snapshot = events(2)
    assert [(k, v["op"], v["after"]) for k, v in snapshot] == [
        ({"id": 1}, "r", {"id": 1, "name": "one"}), ({"id": 2}, "r", {"id": 2, "name": "two"})]

    postgres.sql("INSERT INTO items VALUES (3, 'three')")
    inserted = events(3)[2]
    assert (inserted[0], inserted[1]["op"], inserted[1]["before"], inserted[1]["after"]) == (
        {"id": 3}, "c", None, {"id": 3, "name": "three"})

    # The worker stops and a row comes meanwhile; then the broker restarts under the connector.
    worker.stop()
    postgres.sql("INSERT INTO items VALUES (4, 'four')")
    worker.start()
    assert [(k, v["op"], v["after"]) for k, v in events(4)[3:]] == [({"id": 4}, "c", {"id": 4, "name": "four"})]
    trafka_broker.restart()
    postgres.sql("UPDATE items SET name = 'TWO' WHERE id = 2; DELETE FROM items WHERE id = 1;")
    changes = events(7)[4:]
    assert [(k, v and v["op"], v and v["before"], v and v["after"]) for k, v in changes] == [
        ({"id": 2}, "u", {"id": 2, "name": "two"}, {"id": 2, "name": "TWO"}),
        ({"id": 1}, "d", {"id": 1, "name": "one"}, None),
        ({"id": 1}, None, None, None),  # the delete's tombstone, for compaction
    ]


def test_file_pipeline_in_a_cluster_with_a_broker_stopped(trafka_cluster, workers, tmp_path):
    bootstrap = trafka_cluster.bootstrap_servers
    replicated = {f"{kind}.storage.replication.factor": 3 for kind in ("config", "offset", "status")}
    (worker,) = workers(bootstrap, 1, **replicated)
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    create_topic(bootstrap, "lines", partitions=2, replication=3)
    append_lines(source, 0, 1000)
    worker.put_connector("file-source", {"connector.class": FILE_SOURCE, "file": source, "topic": "lines", "tasks.max": 1})
    worker.put_connector("file-sink", {"connector.class": FILE_SINK, "file": sink, "topics": "lines", "tasks.max": 1})
    wait_for_sink(sink, 1000)

    # Stop the broker leading the data topic's first partition; the worker's clients move on.
    leader = trafka_cluster.partition_state("lines", 0)["leader"]
    trafka_cluster.stop_broker(leader)
    append_lines(source, 1000, 2000)
    wait_for_sink(sink, 2000)
