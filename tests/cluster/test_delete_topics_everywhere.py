"""A deleted topic's committed offsets go on every broker, as each Kafka broker's group
coordinator drops them when its metadata says the topic is gone: a topic made again under the
same name starts every group without a position. trafka dropped them only on the broker the
DeleteTopics reached, so groups coordinated elsewhere resumed at offset 42 of the new topic."""

from __future__ import annotations

import uuid

from trafka.testing.rawwire import RawClient
from trafka.wire.errors import ErrorCode as E

GROUPS = 30  # spread over the three brokers' __consumer_offsets partitions


def coordinator(raw: RawClient, group: str) -> int:
    body = raw.request(10, 3, {"key": group, "key_type": 0})
    assert body.error_code == E.NONE, body
    return body.node_id


def create(raw: RawClient, topic: str) -> None:
    body = raw.request(19, 5, {"topics": [{"name": topic, "num_partitions": 3, "replication_factor": 3,
                                           "assignments": [], "configs": []}], "timeout_ms": 10_000,
                           "validate_only": False})
    assert body.topics[0].error_code == E.NONE, body


def commit(raw: RawClient, group: str, topic: str, offset: int) -> None:
    body = raw.request(8, 2, {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "retention_time_ms": -1,
                              "topics": [{"name": topic, "partitions": [
                                  {"partition_index": p, "committed_offset": offset, "committed_metadata": ""}
                                  for p in range(3)]}]})
    assert {p.error_code for t in body.topics for p in t.partitions} == {E.NONE}, body


def committed(raw: RawClient, group: str, topic: str) -> list[int]:
    body = raw.request(9, 5, {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0, 1, 2]}]})
    return [p.committed_offset for p in body.topics[0].partitions]


def test_a_deleted_topics_offsets_go_on_every_broker(trafka_cluster):
    topic = f"again-{uuid.uuid4().hex[:6]}"
    addresses = trafka_cluster.broker_addresses
    groups = [f"g-{uuid.uuid4().hex[:6]}-{i}" for i in range(GROUPS)]
    with RawClient(addresses[0]) as raw:
        create(raw, topic)
        where = {group: coordinator(raw, group) for group in groups}
    assert len(set(where.values())) == 3, where  # groups on every broker
    for group in groups:
        with RawClient(addresses[where[group]]) as raw:
            commit(raw, group, topic, 42)
            assert committed(raw, group, topic) == [42, 42, 42]
    with RawClient(addresses[0]) as raw:
        body = raw.request(20, 4, {"topic_names": [topic], "timeout_ms": 10_000})
        assert body.responses[0].error_code == E.NONE, body
        create(raw, topic)
    left = {}
    for group in groups:
        with RawClient(addresses[where[group]]) as raw:
            offsets = committed(raw, group, topic)
        if offsets != [-1, -1, -1]:
            left[group] = (where[group], offsets)
    assert not left, f"{len(left)} groups kept the deleted topic's offsets: {left}"
