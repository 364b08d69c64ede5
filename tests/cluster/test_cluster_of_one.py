"""A broker on its own is a cluster of one (docs/cluster.md): one node under its `node.id`, its data
in the data dir itself, leading every partition through the code a simulated cluster runs. So its
controller's word is what clients see (leaders, leader epochs, the controller id), a stopped and
started broker is an election like any other, and a reassignment goes through the controller."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient, TopicPartition as KafkaTopicPartition
from kafka.errors import InvalidReplicationAssignmentError

from trafka.testing.rawwire import RawClient
from trafka.wire.errors import ErrorCode

NODE = 3
RECORDS = 3_000


def _admin(broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap_servers})


def _create(broker, topic: str, partitions: int) -> None:
    admin = _admin(broker)  # kept alive until the futures are done
    for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        future.result(10)


def _produce(broker, topic: str, start: int, count: int) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": "all", "linger.ms": 5,
                         "batch.num.messages": 100, "enable.idempotence": True})
    failed = []
    for i in range(start, start + count):
        producer.produce(topic, key=str(i % 7).encode(), value=str(i).encode(),
                         on_delivery=lambda err, msg: failed.append(err) if err else None)
        producer.poll(0)
    assert producer.flush(30) == 0 and not failed


def _consume_all(broker, topic: str, partitions: int, expected: int) -> list[int]:
    """Every value in the topic: read until `expected` came (or 10 s without any), then 1 s more
    for whatever else is there (a duplicate would be)."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": f"g-{uuid.uuid4().hex[:6]}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    values, idle = [], 0
    while idle < 10 and len(values) < expected:
        batch = consumer.consume(500, 1.0)
        idle = 0 if batch else idle + 1
        values += [int(m.value()) for m in batch if m.error() is None]
    values += [int(m.value()) for m in consumer.consume(500, 1.0) if m.error() is None]
    consumer.close()
    return values


def _partitions(broker, topic: str) -> dict[int, tuple[int, list[int], list[int]]]:
    metadata = _admin(broker).list_topics(topic, timeout=10).topics[topic]
    return {p.id: (p.leader, list(p.replicas), list(p.isrs)) for p in metadata.partitions.values()}


@pytest.mark.trafka_config({"node.id": str(NODE)})
def test_the_controller_places_every_partition_on_the_node_under_its_own_id(trafka_broker):
    topic = "one-" + uuid.uuid4().hex[:6]
    _create(trafka_broker, topic, 4)
    assert _partitions(trafka_broker, topic) == {p: (NODE, [NODE], [NODE]) for p in range(4)}
    admin = _admin(trafka_broker)
    described = admin.describe_cluster().result(10)
    assert described.controller.id == NODE and [n.id for n in described.nodes] == [NODE]
    assert [b["node_id"] for b in trafka_broker.brokers()] == [NODE]
    _produce(trafka_broker, topic, 0, RECORDS)
    assert sorted(_consume_all(trafka_broker, topic, 4, RECORDS)) == list(range(RECORDS))


@pytest.mark.trafka_config({"node.id": str(NODE)})
def test_reassigning_goes_through_the_controller(trafka_broker):
    topic = "moved-" + uuid.uuid4().hex[:6]
    _create(trafka_broker, topic, 2)
    admin = KafkaAdminClient(bootstrap_servers=trafka_broker.bootstrap_servers)
    try:
        outcome = admin.alter_partition_reassignments({
            KafkaTopicPartition(topic, 0): [NODE],  # to where it is: complete at once
            KafkaTopicPartition(topic, 1): [0],  # node 0 is not this cluster's
        })
        assert outcome == {KafkaTopicPartition(topic, 0): None,
                           KafkaTopicPartition(topic, 1): InvalidReplicationAssignmentError}
        assert admin.list_partition_reassignments() == {}
    finally:
        admin.close()
    assert [trafka_broker.partition_state(topic, p)["replicas"] for p in (0, 1)] == [[NODE], [NODE]]


def test_the_only_broker_stopped_and_started_is_an_election_and_keeps_every_record(trafka_broker):
    """Stopping the only broker leaves its partitions without a leader (epoch + 1); starting it
    elects it again (epoch + 1): the leader epoch clients see moves as Kafka's, and every
    acknowledged record is there after a kill."""
    topic = "again-" + uuid.uuid4().hex[:6]
    _create(trafka_broker, topic, 2)
    _produce(trafka_broker, topic, 0, RECORDS)
    node = trafka_broker.brokers()[0]["node_id"]
    assert trafka_broker.partition_state(topic, 0)["leader_epoch"] == 0
    trafka_broker.kill_broker(node)
    stopped = trafka_broker.partition_state(topic, 0)
    assert (stopped["leader"], stopped["leader_epoch"]) == (-1, 1)
    trafka_broker.start_broker(node)
    started = trafka_broker.partition_state(topic, 0)
    assert (started["leader"], started["leader_epoch"]) == (node, 2)
    _produce(trafka_broker, topic, RECORDS, RECORDS)
    assert sorted(_consume_all(trafka_broker, topic, 2, 2 * RECORDS)) == list(range(2 * RECORDS))
    # The batches written since carry the new epoch: OffsetForLeaderEpoch ends epoch 0 where the
    # first run's records end (a consumer checking for truncation asks this), and epoch 2 at the
    # log end; an older current epoch is fenced.
    with RawClient(trafka_broker.bootstrap_servers) as client:
        def end_offset(leader_epoch: int, current: int = -1):
            body = client.request(23, 4, {"replica_id": -1, "topics": [{"topic": topic, "partitions": [
                {"partition": 0, "current_leader_epoch": current, "leader_epoch": leader_epoch}]}]})
            answer = body.topics[0].partitions[0]
            return answer.error_code, answer.leader_epoch, answer.end_offset

        first_end = _end_of_epoch_zero(trafka_broker, topic)
        assert end_offset(0) == (ErrorCode.NONE, 0, first_end)
        assert end_offset(2, current=2)[:2] == (ErrorCode.NONE, 2)
        assert end_offset(0, current=0)[0] == ErrorCode.FENCED_LEADER_EPOCH


def _end_of_epoch_zero(broker, topic: str) -> int:
    """Where the records produced before the restart end in partition 0: the first batch whose
    leader epoch is not 0, read with a raw Fetch."""
    with RawClient(broker.bootstrap_servers) as client:
        headers = client.fetch_batches(topic, 0, 0)
    return next(h.base_offset for h in headers if h.partition_leader_epoch != 0)
