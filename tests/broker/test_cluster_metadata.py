"""ClusterMetadata (trafka/broker/metadata/image.py) with the stores over it: a failed append
changes no store, a snapshot holds every store's state and the log behind it goes, and the
controller's partition state (a reassignment under way included) comes back from the log."""

from __future__ import annotations

import uuid

import pytest

from trafka.broker.cluster.controller import Controller
from trafka.broker.metadata.image import ClusterMetadata
from trafka.broker.metadata.producer_ids import ProducerIdManager
from trafka.broker.metadata.quotas import ClientQuotas
from trafka.broker.security.authorizer import AclBinding, AclOperation, Authorizer, PatternType, PermissionType, \
    ResourceType
from trafka.storage.metadata_log import metadata_log_dir, snapshots
from trafka.wire.errors import ErrorCode

CONFIG = {"super.users": "", "allow.everyone.if.no.acl.found": False}


def _quota(quotas: ClientQuotas, user: str, rate: float):
    return quotas.alter([([("user", user)], [("producer_byte_rate", rate)])], validate_only=False)


def test_a_failed_append_changes_no_store(tmp_path, monkeypatch):
    metadata = ClusterMetadata(tmp_path)
    quotas, ids = ClientQuotas(metadata), ProducerIdManager(metadata)
    acls = Authorizer(CONFIG, metadata)
    _quota(quotas, "alice", 100.0)

    def refuse(records):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(metadata.log, "append", refuse)
    with pytest.raises(OSError):
        _quota(quotas, "alice", 200.0)
    with pytest.raises(OSError):
        ids.next_id()
    with pytest.raises(OSError):
        acls.create([AclBinding(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:bob", "*", AclOperation.READ,
                                PermissionType.ALLOW)])
    assert quotas.entities == {frozenset({("user", "alice")}): {"producer_byte_rate": 100.0}}
    assert acls.acls == []
    monkeypatch.undo()
    assert ids.next_id() == 0  # the block was never reserved, so the first id is still 0
    metadata.close()


def test_a_snapshot_holds_every_store_and_the_log_behind_it_goes(tmp_path):
    metadata = ClusterMetadata(tmp_path)
    metadata.log.max_bytes_between_snapshots = 2000
    quotas = ClientQuotas(metadata)
    for i in range(60):
        assert _quota(quotas, f"user-{i % 7}", float(i + 1)) == [([("user", f"user-{i % 7}")], ErrorCode.NONE, None)]
        metadata.maybe_snapshot()  # what the broker's check does in a worker thread
    expected = dict(quotas.entities)
    directory = metadata_log_dir(tmp_path)
    assert snapshots(directory)
    assert [p.name for p in directory.glob("*.log")] != ["00000000000000000000.log"]  # the first segment went
    metadata.close()
    again = ClusterMetadata(tmp_path)
    assert ClientQuotas(again).entities == expected
    again.close()


def test_the_controllers_state_comes_back_from_the_log(tmp_path):
    topic = uuid.uuid4()
    metadata = ClusterMetadata.of_data_dir(tmp_path)
    controller = Controller([0, 1, 2], {0: None, 1: None, 2: None}, metadata)
    controller.assign(topic, {0: (0, 1), 1: (1, 2)})
    controller.broker_stopped(1, [(topic, 0, False), (topic, 1, False)])
    controller.reassign(topic, 0, (2,))
    state = {p: controller.partition(topic, p) for p in (0, 1)}
    moving = controller.reassignment(topic, 0)
    gone = uuid.uuid4()
    controller.assign(gone, {0: (2, 0)})
    controller.forget(gone)
    metadata.close()
    metadata = ClusterMetadata.of_data_dir(tmp_path)
    again = Controller([0, 1, 2], {0: None, 1: None, 2: None}, metadata)
    assert {p: again.partition(topic, p) for p in (0, 1)} == state
    assert again.reassignment(topic, 0) == moving == ((2,), (0, 1))
    assert again.partitions_placed(gone) == 0
    metadata.close()


def test_a_failed_write_puts_the_controllers_maps_back(tmp_path, monkeypatch):
    topic = uuid.uuid4()
    metadata = ClusterMetadata.of_data_dir(tmp_path)
    controller = Controller([0, 1, 2], {0: None, 1: None, 2: None}, metadata)
    controller.assign(topic, {0: (0, 1)})
    before = controller.partition(topic, 0)

    def refuse(records):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(metadata.log, "append", refuse)
    with pytest.raises(OSError):
        controller.reassign(topic, 0, (2,))
    assert controller.partition(topic, 0) == before and controller.reassignment(topic, 0) is None
    metadata.close()


def _batches(data_dir) -> list[tuple[int, int]]:
    """(base offset, record count) of every batch in the metadata log's segments."""
    found = []
    for segment in sorted(metadata_log_dir(data_dir).glob("*.log")):
        data = segment.read_bytes()
        pos = 0
        while pos + 61 <= len(data):
            base, length = int.from_bytes(data[pos:pos + 8], "big"), int.from_bytes(data[pos + 8:pos + 12], "big")
            found.append((base, int.from_bytes(data[pos + 57:pos + 61], "big")))
            pos += 12 + length
    return found


def test_a_first_start_writes_one_batch_and_a_restart_none(tmp_path):
    """A new broker's bootstrap records (the cluster-level min.insync.replicas, each internal
    topic's TopicRecord and PartitionRecords) are one fsynced batch, as `kafka-storage format`
    writes them; a start over that data writes nothing; what the batch holds comes back."""
    from trafka.testing import TrafkaBroker
    from trafka.testing.rawwire import RawClient

    data_dir = tmp_path / "data"
    broker = TrafkaBroker(data_dir=data_dir, in_process=True,
                          config={"offsets.topic.num.partitions": 5, "transaction.state.log.num.partitions": 4}).start()
    broker.stop()
    batches = _batches(data_dir)
    assert len(batches) == 1, batches
    metadata = ClusterMetadata(data_dir, lock=False)
    topics = {r.fields["name"]: r.fields["topic_id"] for r in metadata.records("TopicRecord")}
    assert {"__consumer_offsets", "__transaction_state", "__share_group_state"} <= set(topics)
    partitions = [r.fields["topic_id"] for r in metadata.records("PartitionRecord")]
    assert partitions.count(topics["__consumer_offsets"]) == 5
    assert partitions.count(topics["__transaction_state"]) == 4
    assert batches[0][1] == len(metadata.records())
    metadata.close()
    broker = TrafkaBroker(data_dir=data_dir, in_process=True,
                          config={"offsets.topic.num.partitions": 5, "transaction.state.log.num.partitions": 4}).start()
    try:
        with RawClient(broker.bootstrap_servers) as raw:
            answer = raw.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                         "include_topic_authorized_operations": False})
        # The internal topics, with the partitions the first start wrote.
        counts = {t.name: len(t.partitions) for t in answer.topics}
        assert counts.get("__consumer_offsets") == 5 and counts.get("__transaction_state") == 4
    finally:
        broker.stop()
    assert _batches(data_dir) == batches


@pytest.mark.parametrize("entity_value", ["orders", "ünïcödé \"quoted\" \\ back\tslash", "", 7, 0])
def test_record_keys_and_values_are_the_bytes_json_gives_and_read_back_alike(entity_value):
    """The metadata log's keys are the image's identity: the fast encoding must give json.dumps's
    bytes for every entity (strings with quotes, escapes and non-ASCII included), and a record
    read back must have the key it was written under."""
    import json

    from trafka.broker.metadata.records import RECORD_TYPES, MetadataRecord, decode

    for kind in RECORD_TYPES.values():
        fields = {name: entity_value for name in kind.entity}
        if kind.name == "ClientQuotaRecord":
            fields["entity"] = [["user", str(entity_value)], ["client-id", None]]
        fields.update({"value": "v\u00e9", "remove": False} if kind.name != "ConfigRecord" else {"value": "x"})
        record = MetadataRecord(kind.name, fields)
        key, value = record.encode()
        assert key == json.dumps({"type": kind.name, "version": kind.version,
                                  "entity": [fields[n] for n in kind.entity]}, separators=(",", ":")).encode()
        assert value == json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()
        again = decode(key, value, "test")
        assert again.fields == fields and again.key() == key
        assert MetadataRecord(kind.name, again.fields).key() == key


@pytest.mark.parametrize("through", ["log", "snapshot"])
def test_partitions_as_new_are_counted_and_come_back_as_their_records(tmp_path, through):
    """The image keeps a partition as new as a count, not a record: every PartitionRecord still
    comes back as written (from the log or a snapshot), one placed and one placed then back as
    new included, and the controller's view (placed_only) holds only the placed one."""
    from trafka.broker.metadata.records import MetadataRecord, new_partition_record

    def placed(topic, partition, replicas):
        return MetadataRecord("PartitionRecord", {
            "topic_id": topic, "partition_id": partition, "replicas": replicas, "leader": replicas[0],
            "leader_epoch": 1, "isr": replicas, "target_replicas": None, "original_replicas": None})

    topic = uuid.uuid4().hex
    metadata = ClusterMetadata(tmp_path)
    metadata.write([MetadataRecord("TopicRecord", {"topic_id": topic, "name": "t"}),
                    *[new_partition_record(topic, p) for p in range(12)]])
    metadata.write([placed(topic, 10, [1, 2]), placed(topic, 3, [2, 1])])
    metadata.write([new_partition_record(topic, 3)])  # back as new
    expected = {**{new_partition_record(topic, p).key(): new_partition_record(topic, p).fields for p in range(12)},
                placed(topic, 10, [1, 2]).key(): placed(topic, 10, [1, 2]).fields}

    def check(image):
        assert {r.key(): r.fields for r in image.records("PartitionRecord")} == expected
        assert [r.fields for r in image.records("PartitionRecord", placed_only=True)] == [placed(topic, 10, [1, 2]).fields]
        assert image.partition_count(topic) == 12 and image.record_count == 13

    check(metadata)
    if through == "snapshot":
        metadata.snapshot()
        assert snapshots(metadata_log_dir(tmp_path))
    metadata.close()
    again = ClusterMetadata(tmp_path)
    check(again)
    again.write([MetadataRecord("RemoveTopicRecord", {"topic_id": topic})])
    assert again.records() == [] and again.partition_count(topic) == 0 and again.record_count == 0
    again.close()
