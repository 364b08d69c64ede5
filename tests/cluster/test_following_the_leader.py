"""What a simulated cluster's leaders carry when they move, through real clients over real
sockets (docs/cluster.md): the schema registry's subjects, the log start offset DeleteRecords
set, a follower that fell behind it, acks=all answers across a leader move, and the leader
epochs of internal topics after a process restart. tests/cluster/test_replica_state.py holds
the same cases on the broker clock without sockets."""

from __future__ import annotations

import json

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer

from testkit.cluster import create_on_three, produce_acknowledged
from trafka.testing.waiting import wait_until
from trafka.wire import records as rec

RECORDS = 5000


def _produce(cluster, name: str, count: int, prefix: str = "r", **config) -> dict[bytes, int]:
    """`count` records r-0, r-1, ...; each value's acknowledged offset."""
    return produce_acknowledged(cluster, name, [b"%s-%d" % (prefix.encode(), i) for i in range(count)], **config)


def _read_all(cluster, name: str, want: int) -> list[tuple[int, bytes]]:
    """(offset, value) of every record from the log start offset on."""
    reader = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "reader",
                       "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    reader.assign([TopicPartition(name, 0, -2)])  # OFFSET_BEGINNING
    seen: list[tuple[int, bytes]] = []
    try:
        def more():
            for message in reader.consume(1000, 0.2):
                if message.error() is None:
                    seen.append((message.offset(), message.value()))
            return len(seen) >= want
        wait_until(more, 30, lambda: f"{want} records of {name} (read {len(seen)})")
    finally:
        reader.close()
    return seen


def _watermarks(cluster, name: str) -> tuple[int, int]:
    reader = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "watermarks"})
    try:
        return reader.get_watermark_offsets(TopicPartition(name, 0), timeout=10)
    finally:
        reader.close()


def _in_sync(cluster, name: str, replica: int):
    return lambda: replica in cluster.partition_state(name, 0)["isr"]


# --- the schema registry -------------------------------------------------------------------


def _avro(version: int) -> str:
    fields = [{"name": f"f{i}", "type": "int", "default": 0} for i in range(version)]
    return json.dumps({"type": "record", "name": "Order", "fields": fields})


def test_the_schema_registry_keeps_every_version_across_broker_stops_and_a_restart(trafka_cluster):
    """Avro records serialized under four schema versions, the fourth registered while broker 0
    was stopped, are all read back after broker 0 started again and after a process restart."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    create_on_three(trafka_cluster, "orders")
    producer = Producer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "acks": "all"})
    context = SerializationContext("orders", MessageField.VALUE)
    for version in (1, 2, 3, 4):
        if version == 4:
            trafka_cluster.stop_broker(0)
        registry = SchemaRegistryClient({"url": trafka_cluster.schema_registry_url})
        serialize = AvroSerializer(registry, _avro(version))
        for i in range(500):
            value = {f"f{j}": i for j in range(version)}
            producer.produce("orders", serialize(value, context))
            producer.poll(0)
        assert producer.flush(30) == 0
    trafka_cluster.start_broker(0)
    for restart in (False, True):
        if restart:
            trafka_cluster.restart()
        registry = SchemaRegistryClient({"url": trafka_cluster.schema_registry_url})
        assert registry.get_versions("orders-value") == [1, 2, 3, 4]
        deserialize = AvroDeserializer(registry)
        values = [deserialize(value, context) for _, value in _read_all(trafka_cluster, "orders", 2000)]
        assert [len(v) for v in values] == [1] * 500 + [2] * 500 + [3] * 500 + [4] * 500
        assert [v["f0"] for v in values] == list(range(500)) * 4


# --- the log start offset --------------------------------------------------------------------


def test_deleted_records_stay_deleted_when_the_leader_moves(trafka_cluster):
    leader, followers = create_on_three(trafka_cluster, "trimmed")
    _produce(trafka_cluster, "trimmed", RECORDS)
    admin = AdminClient({"bootstrap.servers": trafka_cluster.bootstrap_servers})
    deleted = admin.delete_records([TopicPartition("trimmed", 0, RECORDS // 2)])
    assert [f.result(10).low_watermark for f in deleted.values()] == [RECORDS // 2]
    for new_leader in (*followers, leader):
        trafka_cluster.move_leader("trimmed", 0, new_leader)  # the console's POST .../leader
        assert _watermarks(trafka_cluster, "trimmed") == (RECORDS // 2, RECORDS)
    values = _read_all(trafka_cluster, "trimmed", RECORDS // 2)
    assert values[0] == (RECORDS // 2, b"r-%d" % (RECORDS // 2)) and len(values) == RECORDS // 2


def test_a_follower_behind_the_leaders_log_start_catches_up_and_can_lead(trafka_cluster):
    leader, (lagging, _) = create_on_three(trafka_cluster, "far-behind", **{"min.insync.replicas": "2"})
    trafka_cluster.stop_broker(lagging)
    _produce(trafka_cluster, "far-behind", RECORDS)
    admin = AdminClient({"bootstrap.servers": trafka_cluster.bootstrap_servers})
    for future in admin.delete_records([TopicPartition("far-behind", 0, RECORDS - 1000)]).values():
        future.result(10)
    trafka_cluster.start_broker(lagging)
    wait_until(_in_sync(trafka_cluster, "far-behind", lagging), 20, f"broker {lagging} back in the ISR")
    trafka_cluster.move_leader("far-behind", 0, lagging)
    assert _watermarks(trafka_cluster, "far-behind") == (RECORDS - 1000, RECORDS)
    values = _read_all(trafka_cluster, "far-behind", 1000)
    assert [v for _, v in values] == [b"r-%d" % i for i in range(RECORDS - 1000, RECORDS)]


# --- acks=all across a leader move -----------------------------------------------------------


def _segments(cluster, node: int, name: str) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((cluster.data_dir / f"broker-{node}" / f"{name}-0").glob("*.log")))


def test_acks_all_writes_waiting_when_the_leader_moves_are_never_answered_for_other_records(trafka_cluster):
    """The leader appends writes its followers have not fetched; leadership moves to a follower,
    which takes other writes at the same offsets; the old leader truncates and copies those.
    The waiting writes are answered NOT_LEADER_OR_FOLLOWER (the producer retries them on the
    new leader), never with offsets that now hold other records."""
    leader, (new_leader, other) = create_on_three(trafka_cluster, "moving", **{"min.insync.replicas": "1"})
    trafka_cluster.pause_replication(new_leader)
    trafka_cluster.pause_replication(other)
    acknowledged: dict[bytes, int] = {}
    failed = []

    def delivered(error, message):
        if error is None:
            acknowledged[message.value()] = message.offset()
        else:
            failed.append(error)

    config = {"bootstrap.servers": trafka_cluster.bootstrap_servers, "acks": "all", "enable.idempotence": False,
              "linger.ms": 5, "request.timeout.ms": 90000}  # answered by the broker, not its timeout
    waiting = Producer(config)
    for i in range(RECORDS // 2):
        waiting.produce("moving", b"waiting-%d" % i, on_delivery=delivered)
    wait_until(lambda: waiting.poll(0) >= 0 and b"waiting-" in _segments(trafka_cluster, leader, "moving"), 20,
               "the leader to append the first waiting writes")
    assert not acknowledged  # the followers have none of them
    trafka_cluster.move_leader("moving", 0, new_leader)
    trafka_cluster.resume_replication(new_leader)
    after = Producer(config)  # another application, which finds the new leader at once
    for i in range(RECORDS // 2):
        after.produce("moving", b"after-%d" % i, on_delivery=delivered)
        after.poll(0)
    wait_until(lambda: after.poll(0) >= 0 and b"after-" in _segments(trafka_cluster, leader, "moving"), 20,
               "the old leader to copy the new leader's first writes")
    trafka_cluster.resume_replication(other)  # the new leader's high watermark moves past them
    assert after.flush(60) == 0
    admin = AdminClient({"bootstrap.servers": trafka_cluster.bootstrap_servers})
    for future in admin.create_topics([NewTopic("elsewhere", 3, 1)]).values():  # one partition on each broker
        future.result(10)
    traffic = Producer({"bootstrap.servers": trafka_cluster.bootstrap_servers, "acks": "1"})

    def answered() -> bool:  # other writes to the old leader wake its waiting Produce, as they would
        for partition in range(3):
            traffic.produce("elsewhere", b"traffic", partition=partition)
        traffic.flush(5)
        return waiting.flush(0.2) == 0
    wait_until(answered, 60, "the waiting writes to be answered")
    assert not failed, failed
    assert len(acknowledged) == RECORDS
    log = dict(_read_all(trafka_cluster, "moving", max(acknowledged.values()) + 1))  # retries may write twice
    assert {value for value, offset in acknowledged.items() if log.get(offset) != value} == set()


# --- leader epochs of internal topics --------------------------------------------------------


def _batch_epochs(cluster, node: int, name: str) -> list[int]:
    data = _segments(cluster, node, name)
    return [header.partition_leader_epoch for _, header in rec.iter_batches(data)]


def _consume_and_commit(cluster, count: int) -> None:
    """`count` more records read by kafka-python, their offsets committed every poll (by
    assignment: the commits go to the group's coordinator without a rebalance to wait for)."""
    from kafka import TopicPartition as KafkaTopicPartition

    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, group_id="committing",
                             enable_auto_commit=False, auto_offset_reset="earliest")
    consumer.assign([KafkaTopicPartition("committed", 0)])
    try:
        seen = 0

        def more():
            nonlocal seen
            for records in consumer.poll(timeout_ms=200, max_records=100).values():
                seen += len(records)
                consumer.commit()
            return seen >= count
        wait_until(more, 60, f"{count} records consumed")
    finally:
        consumer.close(autocommit=False)


@pytest.mark.trafka_config({"offsets.topic.num.partitions": 1})
def test_coordinator_writes_after_a_restart_carry_the_current_leader_epoch(trafka_cluster):
    """A group commits offsets, its coordinator moves (leader epoch 1), it commits more, the
    process restarts, it commits more: every batch of __consumer_offsets written since the move
    carries epoch 1, so the epochs in the log never go back (what OffsetForLeaderEpoch reads)."""
    create_on_three(trafka_cluster, "committed")
    _produce(trafka_cluster, "committed", 3000)
    _consume_and_commit(trafka_cluster, 1000)
    state = trafka_cluster.partition_state("__consumer_offsets", 0)
    trafka_cluster.move_leader("__consumer_offsets", 0, state["isr"][1])
    _consume_and_commit(trafka_cluster, 1000)
    trafka_cluster.restart()
    _consume_and_commit(trafka_cluster, 1000)
    leader = trafka_cluster.partition_state("__consumer_offsets", 0)["leader"]
    epochs = _batch_epochs(trafka_cluster, leader, "__consumer_offsets")
    assert epochs == sorted(epochs) and epochs[-1] == 1, epochs
