"""A CreateTopics request's topics are made durable by one line of topics/created.log (one fsync
for the whole request), then given their own files by a clean close (trafka/storage/topic_store.py).
Killed brokers, deletions, changes, cut and damaged lines: every answered topic comes back, no
deleted one does."""

from __future__ import annotations

import json

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewPartitions, NewTopic

from trafka.testing import TrafkaBroker
from trafka.testing.broker import BrokerFailedToStart


def _admin(broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap_servers})


def _create(broker, names: list[str], partitions: int = 3) -> None:
    admin = _admin(broker)  # kept alive until its futures are done
    for future in admin.create_topics([NewTopic(n, partitions) for n in names]).values():
        future.result(15)


def _done(futures: dict) -> None:
    for future in futures.values():
        future.result(15)


def _topics(broker) -> dict[str, int]:
    listed = _admin(broker).list_topics(timeout=10).topics
    return {name: len(t.partitions) for name, t in listed.items() if not name.startswith("_")}


def _log_lines(broker) -> list[dict]:
    path = broker.data_dir / "topics" / "created.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def broker(tmp_path):
    broker = TrafkaBroker(data_dir=tmp_path / "data").start()
    yield broker
    broker.close()


def test_one_request_is_one_line_and_a_killed_broker_keeps_every_topic(broker):
    names = [f"many-{i:03d}" for i in range(120)]
    _create(broker, names)
    lines = _log_lines(broker)
    assert len(lines) == 1 and sorted(t["name"] for t in lines[0]["created"]) == names
    assert not any((broker.data_dir / "topics").glob("*.json")) or all(
        json.loads(p.read_text())["name"].startswith("_") for p in (broker.data_dir / "topics").glob("*.json"))
    broker.restart(kill=True)
    assert _topics(broker) == {name: 3 for name in names}


def test_a_deleted_or_changed_topic_stays_so_after_a_kill(broker):
    _create(broker, ["stays", "goes", "grows", "configured"])
    admin = _admin(broker)
    _done(admin.delete_topics(["goes"]))
    _done(admin.create_partitions([NewPartitions("grows", 5)]))
    retention = ConfigEntry("retention.ms", "123456", incremental_operation=AlterConfigOpType.SET)
    _done(admin.incremental_alter_configs([ConfigResource(ConfigResource.Type.TOPIC, "configured",
                                                          incremental_configs=[retention])]))
    broker.restart(kill=True)
    assert _topics(broker) == {"stays": 3, "grows": 5, "configured": 3}
    admin = _admin(broker)
    described = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "configured")])
    assert next(iter(described.values())).result(10)["retention.ms"].value == "123456"
    _create(broker, ["goes"])  # the name is free again, with a new id
    broker.restart(kill=True)
    assert _topics(broker) == {"stays": 3, "grows": 5, "configured": 3, "goes": 3}


def test_a_clean_close_gives_each_topic_its_file_and_removes_the_log(broker):
    _create(broker, ["filed-a", "filed-b"])
    admin = _admin(broker)
    _done(admin.delete_topics(["filed-b"]))
    broker.stop()
    assert not (broker.data_dir / "topics" / "created.log").exists()
    names = {json.loads(p.read_text())["name"] for p in (broker.data_dir / "topics").glob("*.json")}
    assert "filed-a" in names and "filed-b" not in names
    broker.start()
    assert _topics(broker) == {"filed-a": 3}


def test_a_last_line_cut_by_a_crash_is_left_out_and_later_lines_follow_whole_ones(broker):
    _create(broker, ["before-the-cut"])
    broker.kill()
    path = broker.data_dir / "topics" / "created.log"
    whole = path.read_text()
    cut = json.dumps({"created": [{"name": "never-answered", "topic_id": "6f1b4c9e-0d8a-4a57-9a51-0c3c1d2b7e11",
                                   "partitions": 1, "configs": {}}]})
    path.write_text(whole + cut[: len(cut) // 2])
    broker.start()
    assert "leaving out its last line" in broker.log_text()
    assert path.read_text() == whole
    _create(broker, ["after-the-cut"])
    broker.restart(kill=True)
    assert _topics(broker) == {"before-the-cut": 3, "after-the-cut": 3}


def test_a_damaged_whole_line_stops_the_start_with_the_file_named(broker):
    _create(broker, ["first"])
    _create(broker, ["second"])
    broker.kill()
    path = broker.data_dir / "topics" / "created.log"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("{damaged\n" + lines[1])
    with pytest.raises(BrokerFailedToStart) as refused:
        broker.start()
    assert f"{path}: line 1 is damaged" in str(refused.value)
    assert "Traceback" not in str(refused.value)
    path.write_text("".join(lines))
    broker.start()
    assert _topics(broker) == {"first": 3, "second": 3}


def test_the_offline_tools_read_topics_from_the_log(broker):
    import subprocess
    import sys

    _create(broker, ["offline-seen"])
    broker.kill()
    out = subprocess.run([sys.executable, "-m", "trafka", "describe", "--data-dir", str(broker.data_dir)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "offline-seen" in out.stdout
