import uuid

import pytest
from testkit.storage import batch

from trafka.storage import (
    InvalidConfig,
    InvalidPartitions,
    InvalidTopic,
    KAFKA_DEFAULTS,
    LogManager,
    StorageError,
    TopicAlreadyExists,
    UnknownTopic,
)


@pytest.fixture
def manager(tmp_path, clock):
    opened = []

    def open_(**kwargs):
        m = LogManager(tmp_path / "data", clock=clock, **kwargs)
        opened.append(m)
        return m

    yield open_
    for m in opened:
        m.close()


def test_create_append_reload(manager, tmp_path):
    m = manager()
    meta = m.create_topic("orders", 3, {"retention.ms": "1000", "cleanup.policy": "compact"})
    assert isinstance(meta.topic_id, uuid.UUID)
    m.log("orders", 1).append(batch(4))
    # A partition's directory appears with its first write.
    assert sorted(p.name for p in (tmp_path / "data").iterdir() if p.name.startswith("orders")) == ["orders-1"]
    m.close()
    again = manager()
    assert again.list_topics() == ["orders"]
    reloaded = again.topic("orders")
    assert (reloaded.topic_id, reloaded.partitions, reloaded.configs) == (
        meta.topic_id, 3, {"retention.ms": "1000", "cleanup.policy": "compact"}
    )
    assert again.topic_by_id(meta.topic_id).name == "orders"
    assert again.log("orders", 1).log_end_offset == 4
    assert again.log_config("orders").retention_ms == 1000 and again.log_config("orders").compact


def test_configs_layer_kafka_defaults_broker_defaults_and_topic_overrides(manager):
    m = manager(broker_config={"log.segment.bytes": "2048", "log.retention.hours": "1", "num.network.threads": "3"})
    m.create_topic("a", 1, {"segment.bytes": "4096"})
    m.create_topic("b", 1)
    assert m.log_config("a").segment_bytes == 4096
    assert m.log_config("b").segment_bytes == 2048
    assert m.log_config("b").retention_ms == 3_600_000
    assert m.log_config("b").values["max.message.bytes"] == KAFKA_DEFAULTS["max.message.bytes"] == "1048588"
    assert m.log("b", 0).config.segment_bytes == 2048


def test_set_topic_config_persists_and_reaches_the_logs(manager):
    m = manager()
    m.create_topic("t", 2)
    m.set_topic_config("t", {"message.timestamp.type": "LogAppendTime"})
    assert m.log("t", 1).config.log_append_time
    with pytest.raises(InvalidConfig):
        m.set_topic_config("t", {"no.such.config": "1"})
    with pytest.raises(InvalidConfig):
        m.set_topic_config("t", {"segment.bytes": "lots"})
    m.close()
    assert manager().topic("t").configs == {"message.timestamp.type": "LogAppendTime"}


def test_topic_name_validation(manager):
    m = manager()
    for bad in ["", ".", "..", "a" * 250, "has space", "slash/name", "ümlaut"]:
        with pytest.raises(InvalidTopic):
            m.create_topic(bad, 1)
    m.create_topic("a" * 249, 1)
    m.create_topic("ok.name_with-all", 1)
    with pytest.raises(InvalidTopic, match="collides"):
        m.create_topic("ok_name_with-all", 1)
    with pytest.raises(TopicAlreadyExists):
        m.create_topic("ok.name_with-all", 1)
    with pytest.raises(InvalidPartitions):
        m.create_topic("zero", 0)
    with pytest.raises(InvalidConfig):
        m.create_topic("badconf", 1, {"retention.ms": "soon"})
    assert "badconf" not in m.list_topics()


def test_delete_topic_removes_its_directories(manager, tmp_path):
    m = manager()
    m.create_topic("gone", 2)
    m.create_topic("stays", 1)
    m.log("gone", 0).append(batch(1))
    m.delete_topic("gone")
    assert not any(p.name.startswith("gone") for p in (tmp_path / "data").iterdir())
    with pytest.raises(UnknownTopic):
        m.log("gone", 0)
    with pytest.raises(UnknownTopic):
        m.delete_topic("gone")
    m.close()
    again = manager()
    assert again.list_topics() == ["stays"]
    recreated = again.create_topic("gone", 1)
    assert again.log("gone", 0).log_end_offset == 0 and recreated.partitions == 1


def test_create_partitions(manager):
    m = manager()
    m.create_topic("t", 1)
    m.create_partitions("t", 3)
    m.log("t", 2).append(batch(1))
    with pytest.raises(InvalidPartitions):
        m.create_partitions("t", 2)
    m.close()
    assert manager().topic("t").partitions == 3


def test_data_dir_is_locked(manager):
    manager()
    with pytest.raises(StorageError, match="in use"):
        manager()


def test_a_bad_value_in_a_topic_metadata_file_stops_start_up_with_its_name(manager, tmp_path):
    import json

    m = manager()
    meta = m.create_topic("orders", 1, {"retention.ms": "1000"})
    m.close()
    path = tmp_path / "data" / "topics" / f"{meta.topic_id}.json"
    body = json.loads(path.read_text())
    body["configs"]["retention.ms"] = "soon"
    path.write_text(json.dumps(body))
    with pytest.raises(StorageError, match="retention.ms.*fix the file") as raised:
        manager()
    assert str(path) in str(raised.value)
