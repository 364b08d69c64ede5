"""Corrupt files in the data directory: a clear refusal or a clear log line, never lost data."""

from __future__ import annotations

import json
import shutil

import pytest
from kafka import KafkaProducer

from testkit.kafka_python import stored_values

from trafka.testing import TrafkaBroker
from trafka.testing.broker import BrokerFailedToStart


def produce(broker, topic: str, values: list[bytes]) -> None:
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    for value in values:
        producer.send(topic, value).get(timeout=10)
    producer.close()


@pytest.fixture
def stopped_broker_with_data(tmp_path):
    broker = TrafkaBroker(data_dir=tmp_path / "data").start()
    produce(broker, "kept", [f"v{i}".encode() for i in range(20)])
    broker.stop()
    yield broker
    broker.close()


def test_unreadable_topic_metadata_of_an_older_trafka_stops_the_start_with_the_file_named(stopped_broker_with_data):
    """Topics are in the metadata log; an older trafka's topics/ directory is imported at the
    first start, and a file there that cannot be read stops it, naming the file."""
    broker = stopped_broker_with_data
    path = broker.data_dir / "topics" / "0b5e7e9a-5a52-4d57-9d43-7c1c6c0f3a11.json"
    path.parent.mkdir()
    path.write_text("{not json")
    with pytest.raises(BrokerFailedToStart) as refused:
        broker.start()
    assert f"{path}: unreadable topic metadata" in str(refused.value)
    assert "Traceback" not in str(refused.value)
    path.write_text(json.dumps({"name": "older", "topic_id": path.stem, "partitions": 2, "configs": {}}))
    broker.start()
    assert stored_values(broker.bootstrap_servers, "kept") == [f"v{i}".encode() for i in range(20)]
    assert not path.parent.exists()


def test_corrupt_producer_id_block_stops_the_start(stopped_broker_with_data):
    """An older trafka's data dir (no metadata log, a producer_ids file): the file is imported
    at the first start, and a corrupt one stops it, naming the file."""
    broker = stopped_broker_with_data
    shutil.rmtree(broker.data_dir / "metadata")
    (broker.data_dir / "producer_ids").write_text("garbage\n")
    with pytest.raises(BrokerFailedToStart) as refused:
        broker.start()
    assert "producer_ids is corrupt" in str(refused.value)
    assert "Traceback" not in str(refused.value)
    (broker.data_dir / "producer_ids").write_text("5000\n")
    broker.start()
    produce(broker, "kept", [b"after"])
    assert stored_values(broker.bootstrap_servers, "kept")[-1] == b"after"
    assert (broker.data_dir / "producer_ids.migrated").read_text() == "5000\n"


def test_torn_tail_and_garbage_checkpoints_are_recovered_with_a_log_line(stopped_broker_with_data):
    broker = stopped_broker_with_data
    partition = broker.data_dir / "kept-0"
    with open(partition / "00000000000000000000.log", "ab") as log_file:
        log_file.write(b"\x00\x00\x00\x00\x00\x00\x00\x14\x00\x00\x01\x00half a batch")
    (broker.data_dir / ".kafka_cleanshutdown").unlink(missing_ok=True)  # as after a crash
    (partition / ".kafka_cleanshutdown").unlink(missing_ok=True)
    for name in ("recovery-point", "log-start-offset"):
        (partition / name).write_text("not a number")
    for snapshot in partition.glob("*.snapshot"):
        snapshot.write_text("{broken")
    (partition / "00000000000000000000.index").write_bytes(b"\x01\x02\x03")
    broker.start()
    assert stored_values(broker.bootstrap_servers, "kept") == [f"v{i}".encode() for i in range(20)]
    log = broker.log_text()
    assert "truncated" in log and "kept-0" in log
    produce(broker, "kept", [b"next"])
    assert stored_values(broker.bootstrap_servers, "kept")[-2:] == [b"v19", b"next"]
