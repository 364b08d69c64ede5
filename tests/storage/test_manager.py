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


def _partition_files(data_dir, name):
    return sorted(p.name for p in (data_dir / name).iterdir())


def test_a_clean_close_checkpoints_the_whole_directory_once(manager, tmp_path, caplog):
    data_dir = tmp_path / "data"
    m = manager()
    m.create_topic("orders", 3)
    for partition in (0, 1):
        m.log("orders", partition).append(batch(4))
    m.log("orders", 1).delete_records_before(2)
    m.close()
    # One marker and one checkpoint of each kind for the directory, as Kafka writes them; the
    # partitions get their fsynced segments and a producer-state snapshot, no marker of their own.
    assert (data_dir / ".kafka_cleanshutdown").exists()
    assert (data_dir / "recovery-point-offset-checkpoint").read_text().splitlines() == [
        "0", "2", "orders 0 4", "orders 1 4"]
    assert (data_dir / "log-start-offset-checkpoint").read_text().splitlines() == [
        "0", "2", "orders 0 0", "orders 1 2"]
    assert ".kafka_cleanshutdown" not in _partition_files(data_dir, "orders-0")
    assert "recovery-point" not in _partition_files(data_dir, "orders-0")
    assert not (data_dir / "orders-2").exists()  # never written: nothing to flush or record

    with caplog.at_level("INFO", logger="trafka.storage"):
        again = manager()
    assert "recovering" not in caplog.text  # opened as after a clean shutdown
    assert not (data_dir / ".kafka_cleanshutdown").exists()  # a crash from now on is unclean
    assert [again.log("orders", p).log_end_offset for p in range(3)] == [4, 4, 0]
    assert again.log("orders", 1).log_start_offset == 2
    again.log("orders", 0).append(batch(1))
    again.close(clean=False)  # a crash: the checkpoints on disk are old, and no marker

    caplog.clear()
    with caplog.at_level("INFO", logger="trafka.storage"):
        third = manager()
    assert "no clean shutdown marker, recovering" in caplog.text
    assert [third.log("orders", p).log_end_offset for p in range(3)] == [5, 4, 0]
    assert third.log("orders", 1).log_start_offset == 2  # from the partition's own checkpoint


def test_a_partition_left_out_of_the_checkpoint_is_recovered(manager, tmp_path, caplog):
    data_dir = tmp_path / "data"
    m = manager()
    m.create_topic("orders", 2)
    for partition in (0, 1):
        m.log("orders", partition).append(batch(3))
    m.close()
    checkpoint = data_dir / "recovery-point-offset-checkpoint"
    checkpoint.write_text("0\n1\norders 0 3\n")  # as if orders-1 had failed to close
    with open(data_dir / "orders-1" / "00000000000000000000.log", "ab") as torn:
        torn.write(b"\x00\x00\x00\x00\x00\x00\x00\x03half")
    with caplog.at_level("INFO", logger="trafka.storage"):
        again = manager()
    assert "orders-1: no clean shutdown marker" in caplog.text
    assert "orders-0: no clean shutdown marker" not in caplog.text
    assert [again.log("orders", p).log_end_offset for p in range(2)] == [3, 3]


def test_an_unreadable_checkpoint_makes_every_partition_recover(manager, tmp_path, caplog):
    data_dir = tmp_path / "data"
    m = manager()
    m.create_topic("orders", 2)
    for partition in (0, 1):
        m.log("orders", partition).append(batch(3))
    m.close()
    (data_dir / "log-start-offset-checkpoint").write_text("garbage")
    with caplog.at_level("INFO", logger="trafka.storage"):
        again = manager()
    assert "unreadable checkpoint" in caplog.text
    assert caplog.text.count("no clean shutdown marker") == 2
    assert [again.log("orders", p).log_end_offset for p in range(2)] == [3, 3]


def test_closing_twice_keeps_the_first_checkpoints(manager, tmp_path):
    data_dir = tmp_path / "data"
    m = manager()
    m.create_topic("orders", 1)
    m.log("orders", 0).append(batch(2))
    m.close()
    m.close()
    assert (data_dir / "recovery-point-offset-checkpoint").read_text().splitlines() == ["0", "1", "orders 0 2"]


def test_after_a_clean_close_partitions_load_on_first_use(manager, tmp_path, caplog):
    data_dir = tmp_path / "data"
    m = manager()
    m.create_topic("orders", 3)
    for partition in range(3):
        m.log("orders", partition).append(batch(partition + 2))
    m.log("orders", 2).delete_records_before(1)
    m.close()
    # orders-1's index is damaged while the broker is down: found when the partition is first read.
    (data_dir / "orders-1" / "00000000000000000000.index").write_bytes(b"\x01\x02\x03")

    again = manager()
    assert all(again.log("orders", p).deferred for p in range(3))
    assert again.log("orders", 0).log_end_offset == 2  # read: loaded now
    assert not again.log("orders", 0).deferred and again.log("orders", 1).deferred
    with caplog.at_level("INFO", logger="trafka.storage"):
        assert again.log("orders", 1).log_end_offset == 3
    assert "recovering the segment" in caplog.text
    again.set_topic_config("orders", {"retention.ms": "1000"})  # orders-2 stays unread
    assert again.log("orders", 2).deferred
    again.close()  # orders-2, never read, keeps its checkpointed state
    assert (data_dir / "log-start-offset-checkpoint").read_text().splitlines()[2:] == [
        "orders 0 0", "orders 1 0", "orders 2 1"]

    third = manager()
    assert [third.log("orders", p).log_end_offset for p in range(3)] == [2, 3, 4]
    assert third.log("orders", 2).log_start_offset == 1
    assert third.log_config("orders").retention_ms == 1000
    third.close(clean=False)  # a crash with every partition loaded or not: recovered next time
    fourth = manager()
    assert not fourth.log("orders", 2).deferred
    assert [fourth.log("orders", p).log_end_offset for p in range(3)] == [2, 3, 4]


def test_an_unread_partition_survives_a_crash_and_deletion(manager, tmp_path):
    data_dir = tmp_path / "data"
    m = manager()
    m.create_topic("orders", 1)
    m.create_topic("gone", 1)
    m.log("orders", 0).append(batch(3))
    m.log("gone", 0).append(batch(1))
    m.close()
    again = manager()
    again.delete_topic("gone")  # deferred, never read: its directory goes all the same
    assert not (data_dir / "gone-0").exists()
    again.close(clean=False)
    third = manager()
    assert third.log("orders", 0).log_end_offset == 3
    assert third.list_topics() == ["orders"]


@pytest.mark.parametrize("clean", [True, False])
def test_a_closed_manager_opens_no_log_over_its_directories(manager, tmp_path, clean):
    """A stopped broker's request or fetcher still running one step after the stop must not get
    a fresh, empty log over a partition's directory (appends there would land after the real
    bytes, to be cut as a torn tail at the next open): it gets LogClosed."""
    from trafka.storage import LogClosed

    m = manager()
    m.create_topic("orders", 2, {})
    m.log("orders", 0).append(batch(5))
    m.close(clean=clean)
    for partition in (0, 1):
        with pytest.raises(LogClosed):
            m.log("orders", partition)
    again = manager()
    assert again.log("orders", 0).log_end_offset == 5
    assert not (tmp_path / "data" / "orders-1").exists()


def test_a_stale_partition_directory_is_moved_aside_when_its_topic_is_created(manager, tmp_path):
    """Found by a stat for a small CreateTopics, in one listing of the data dir for a big one."""
    m = manager()
    for name in ("big-7", "small-1"):
        (tmp_path / "data" / name).mkdir()
        (tmp_path / "data" / name / "00000000000000000000.log").write_bytes(b"left over")
    m.create_topics([("big", 200, {}), ("small", 2, {})])
    m.create_topics([("small2", 2, {})])  # nothing stale: a stat finds nothing
    assert not (tmp_path / "data" / "big-7").exists() and not (tmp_path / "data" / "small-1").exists()
    assert m.log("big", 7).log_end_offset == 0 and m.log("small", 1).log_end_offset == 0
    (tmp_path / "data" / "one-0").mkdir()
    m.create_topics([("one", 1, {})])
    assert not (tmp_path / "data" / "one-0").exists()
