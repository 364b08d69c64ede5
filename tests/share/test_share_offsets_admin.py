"""AlterShareGroupOffsets (91) and DeleteShareGroupOffsets (92) on the wire: their errors in
Kafka's order, and a changed start offset that is written before it counts (it survives a
restart). The happy path with the Java admin client is in compat_tests/test_admin_calls.py."""

from __future__ import annotations

from confluent_kafka import Consumer

from testkit.groups import create_topic
from trafka.testing.rawwire import RawClient
from trafka.wire.errors import ErrorCode as E
from trafka.wire.types import ZERO_UUID


def alter(broker, group: str, topic: str, moves: dict[int, int]):
    with RawClient(broker.bootstrap_servers) as raw:
        return raw.request(91, 0, {"group_id": group, "topics": [
            {"topic_name": topic, "partitions": [{"partition_index": p, "start_offset": o} for p, o in moves.items()]}]})


def delete(broker, group: str, topics: list[str]):
    with RawClient(broker.bootstrap_servers) as raw:
        return raw.request(92, 0, {"group_id": group, "topics": [{"topic_name": t} for t in topics]})


def start_offsets(broker, group: str, version: int = 1) -> dict:
    with RawClient(broker.bootstrap_servers) as raw:
        [answer] = raw.request(90, version, {"groups": [{"group_id": group, "topics": None}]}).groups
    return {(t.topic_name, p.partition_index): (p.start_offset, p.lag) for t in answer.topics for p in t.partitions}


def test_alter_then_delete_share_group_offsets_are_durable(broker):
    create_topic(broker.bootstrap_servers, "moved", 2)
    answer = alter(broker, "movers", "moved", {0: 0, 1: 0, 7: 0})
    assert answer.error_code == E.NONE
    assert [(p.partition_index, p.error_code) for p in answer.responses[0].partitions] == [
        (0, E.NONE), (1, E.NONE), (7, E.UNKNOWN_TOPIC_OR_PARTITION)]
    assert answer.responses[0].topic_id == broker_topic_id(broker, "moved")
    assert start_offsets(broker, "movers") == {("moved", 0): (0, 0), ("moved", 1): (0, 0)}
    broker.restart()
    assert start_offsets(broker, "movers") == {("moved", 0): (0, 0), ("moved", 1): (0, 0)}
    answer = delete(broker, "movers", ["moved", "nowhere"])
    assert [(t.topic_name, t.error_code) for t in answer.responses] == [
        ("moved", E.NONE), ("nowhere", E.UNKNOWN_TOPIC_OR_PARTITION)]
    assert start_offsets(broker, "movers") == {}
    broker.restart()
    assert start_offsets(broker, "movers") == {}


def test_offsets_of_a_consumer_group_or_an_unknown_topic_are_refused(broker):
    create_topic(broker.bootstrap_servers, "plain", 1)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "classic-readers",
                         "session.timeout.ms": 6000})
    consumer.subscribe(["plain"])
    try:
        for _ in range(20):
            consumer.poll(0.3)
            if consumer.assignment():
                break
        assert consumer.assignment(), "the consumer never joined"
        refused = alter(broker, "classic-readers", "plain", {0: 0})
        assert refused.error_code == E.GROUP_ID_NOT_FOUND
        assert "not a share group" in refused.error_message
        assert delete(broker, "classic-readers", ["plain"]).error_code == E.GROUP_ID_NOT_FOUND
    finally:
        consumer.close()
    unknown = alter(broker, "share-x", "missing", {0: 3})
    assert unknown.error_code == E.NONE
    assert unknown.responses[0].partitions[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    negative = alter(broker, "share-x", "plain", {0: -5})
    assert negative.responses[0].partitions[0].error_code == E.INVALID_REQUEST
    assert start_offsets(broker, "share-x") == {}


def broker_topic_id(broker, name: str):
    with RawClient(broker.bootstrap_servers) as raw:
        metadata = raw.request(3, 12, {"topics": [{"topic_id": ZERO_UUID, "name": name}], "allow_auto_topic_creation": False,
                                       "include_topic_authorized_operations": False})
    return metadata.topics[0].topic_id
