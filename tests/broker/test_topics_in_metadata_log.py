"""Topics live in the metadata log (docs/metadata-log.md): TopicRecord, PartitionRecord per
partition, ConfigRecord on TOPIC, RemoveTopicRecord. What real admin clients create, grow,
configure and delete survives a kill -9; a torn last batch leaves a topic whole or absent; a data
dir of the previous version (topics/ files, created.log) is imported once."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic, ResourceType
from kafka.admin import KafkaAdminClient

from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient


def _admin(broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap_servers})


def _done(futures) -> None:
    for future in futures.values():
        future.result(20)


def _topics(broker) -> dict:
    """name -> (topic id, partitions, overrides), as kafka-python's and confluent-kafka's admin
    clients see them."""
    admin = _admin(broker)
    listed = admin.list_topics(timeout=10).topics
    names = sorted(n for n in listed if not n.startswith("_"))
    kp = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    try:
        ids = {t.get("topic", t.get("name")): str(t.get("topic_id")) for t in kp.describe_topics(names)} if names else {}
    finally:
        kp.close()
    result = {}
    for name in names:
        (future,) = admin.describe_configs([ConfigResource(ResourceType.TOPIC, name)]).values()
        overrides = {k: e.value for k, e in future.result(20).items() if e.source == 1}
        result[name] = (ids.get(name), len(listed[name].partitions), overrides)
    return result


def _ids(broker) -> dict:
    with RawClient(broker.bootstrap_servers) as raw:
        body = raw.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                   "include_topic_authorized_operations": False})
    return {t.name: t.topic_id for t in body.topics}


def test_topics_ids_partitions_and_configs_survive_a_kill(tmp_path):
    broker = TrafkaBroker(data_dir=tmp_path / "data")
    broker.start()
    try:
        admin = _admin(broker)
        _done(admin.create_topics([NewTopic("kept", 3, 1, config={"retention.ms": "123456"}),
                                   NewTopic("grown", 1, 1), NewTopic("gone", 2, 1)]))
        _done(admin.create_partitions([NewPartitions("grown", 4)]))
        _done(admin.alter_configs([ConfigResource(ResourceType.TOPIC, "grown", set_config={"cleanup.policy": "compact"})]))
        _done(admin.delete_topics(["gone"], operation_timeout=20))
        before, ids = _topics(broker), _ids(broker)
        assert {n: (p, c) for n, (_, p, c) in before.items()} == {
            "kept": (3, {"retention.ms": "123456"}), "grown": (4, {"cleanup.policy": "compact"})}
        assert not (broker.data_dir / "topics").exists()
        broker.restart(kill=True)
        assert _topics(broker) == before
        assert _ids(broker) == ids
        broker.restart()  # a clean close keeps them too
        assert _topics(broker) == before
    finally:
        broker.stop()
    data = str(broker.data_dir)
    described = _cli("describe", "--data-dir", data)
    assert {tuple(line.split()[:2]) for line in described.splitlines()[1:] if not line.startswith("_")} == {
        ("kept", "0"), ("kept", "1"), ("kept", "2"), ("grown", "0"), ("grown", "1"), ("grown", "2"), ("grown", "3")}
    shown = _cli("metadata", "--data-dir", data, "--section", "topics")
    assert f"kept {uuid.UUID(str(ids['kept']))} partitions=3 retention.ms=123456" in shown, shown
    assert "grown" in shown and "partitions=4 cleanup.policy=compact" in shown and "gone" not in shown


def _cli(*args) -> str:
    done = subprocess.run([sys.executable, "-m", "trafka", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_directory_of_a_topic_the_log_lacks_is_moved_aside(tmp_path):
    broker = TrafkaBroker(data_dir=tmp_path / "data")
    broker.start()
    try:
        broker.stop()
        stray = broker.data_dir / "phantom-0"
        stray.mkdir()
        (stray / "00000000000000000000.log").write_bytes(b"")
        broker.start()
        assert "phantom" not in _admin(broker).list_topics(timeout=10).topics
        assert not stray.exists()
        assert [p.name for p in broker.data_dir.iterdir() if p.name.startswith("phantom-0.") and p.name.endswith("-stray")]
    finally:
        broker.stop()


def _batches(segment: bytes) -> list[int]:
    """The start of each record batch of a segment (base offset 8 bytes, length 4)."""
    starts, at = [], 0
    while at + 12 <= len(segment):
        starts.append(at)
        at += 12 + int.from_bytes(segment[at + 8:at + 12], "big")
    return starts


def test_a_torn_create_topics_batch_leaves_the_topic_whole_or_absent(tmp_path):
    broker = TrafkaBroker(data_dir=tmp_path / "data")
    broker.start()
    try:
        admin = _admin(broker)
        _done(admin.create_topics([NewTopic("first", 2, 1)]))
        _done(admin.create_topics([NewTopic(f"torn-{i}", 3, 1) for i in range(5)]))
        broker.kill()
        segment = sorted((broker.data_dir / "metadata" / "__cluster_metadata-0").glob("*.log"))[-1]
        whole = segment.read_bytes()
        last = _batches(whole)[-1]
        for cut in (last + 1, last + (len(whole) - last) // 2, len(whole) - 1):
            segment.write_bytes(whole[:cut])
            for snapshot in segment.parent.glob("*.checkpoint"):
                snapshot.unlink()
            broker.start()
            topics = _topics(broker)
            assert topics["first"][1] == 2
            assert not [n for n in topics if n.startswith("torn")], topics
            broker.stop()
        segment.write_bytes(whole)
        broker.start()
        topics = _topics(broker)
        assert {n: t[1] for n, t in topics.items() if n.startswith("torn")} == {f"torn-{i}": 3 for i in range(5)}
        # A DeleteTopics of several topics is one batch too: torn, every topic is still there.
        admin = _admin(broker)
        _done(admin.delete_topics([f"torn-{i}" for i in range(5)], operation_timeout=20))
        broker.kill()
        whole = segment.read_bytes()
        segment.write_bytes(whole[:len(whole) - 1])
        for snapshot in segment.parent.glob("*.checkpoint"):
            snapshot.unlink()
        broker.start()
        assert sorted(n for n in _topics(broker) if n.startswith("torn")) == [f"torn-{i}" for i in range(5)]
        broker.stop()
        segment.write_bytes(whole)
        broker.start()
        assert not [n for n in _topics(broker) if n.startswith("torn")]
    finally:
        broker.stop()


def _write_old_topics(data) -> dict:
    """topics/ as the previous trafka wrote it: one file per topic, and created.log."""
    topics = data / "topics"
    topics.mkdir(parents=True)
    filed, logged, deleted = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    (topics / f"{filed}.json").write_text(json.dumps({"name": "filed", "topic_id": str(filed), "partitions": 2,
                                                      "configs": {"retention.ms": "777"}}))
    lines = [{"created": [{"name": "logged", "topic_id": str(logged), "partitions": 5, "configs": {}},
                          {"name": "dropped", "topic_id": str(deleted), "partitions": 1, "configs": {}}]},
             {"deleted": [str(deleted)]}]
    (topics / "created.log").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (data / "filed-0").mkdir()
    return {"filed": filed, "logged": logged}


def test_topics_of_the_previous_version_are_imported_once(tmp_path):
    data = tmp_path / "data"
    broker = TrafkaBroker(data_dir=data)
    broker.start()  # a data dir with a metadata log already (the previous version had one)
    broker.stop()
    ids = _write_old_topics(data)
    broker.start()
    try:
        topics = _topics(broker)
        assert {n: (t[1], t[2]) for n, t in topics.items()} == {"filed": (2, {"retention.ms": "777"}), "logged": (5, {})}
        assert {n: uuid.UUID(str(i)) for n, i in _ids(broker).items() if not n.startswith("_")} == ids
        assert (data / "filed-0").exists()
        admin = _admin(broker)
        _done(admin.delete_topics(["logged"], operation_timeout=20))
    finally:
        broker.stop()
    assert not (data / "topics").exists() and (data / "topics.migrated" / "created.log").exists()
    broker.start()
    try:
        assert set(_topics(broker)) == {"filed"}
    finally:
        broker.stop()


def test_a_large_createtopics_is_snapshotted_after_its_answer_and_comes_back(tmp_path):
    """500 topics x 10 partitions (over a MiB of records) in one CreateTopics: the broker's
    snapshot check writes the image (in a worker thread, or at once on advance_clock), the
    older segments go, and a restart reads every topic back from the snapshot."""
    from trafka.storage.metadata_log import metadata_log_dir, snapshots

    data_dir = tmp_path / "data"
    broker = TrafkaBroker(data_dir=data_dir, in_process=True).start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        _done(admin.create_topics([NewTopic(f"many-{i}", 10, 1) for i in range(500)], request_timeout=60))
        broker.advance_clock(1_000)
        assert snapshots(metadata_log_dir(data_dir)), "no snapshot after the check"
    finally:
        broker.stop()
    broker = TrafkaBroker(data_dir=data_dir, in_process=True).start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        topics = admin.list_topics(timeout=20).topics
        assert {f"many-{i}" for i in range(500)} <= set(topics)
        assert {len(topics[f"many-{i}"].partitions) for i in range(500)} == {10}
    finally:
        broker.stop()
