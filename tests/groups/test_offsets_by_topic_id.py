"""OffsetCommit v10 and OffsetFetch v10 (Kafka 4.3, KIP-848) name topics by id, asked and
answered: the same offsets as by name, UNKNOWN_TOPIC_ID for an id no topic has, topic ids in an
all-topics fetch. Byte-level, with the raw client; Java 4.3 consumers use these versions."""

from __future__ import annotations

import uuid

from trafka.testing.rawwire import RawClient
from trafka.wire.errors import ErrorCode as E
from trafka.wire.types import ZERO_UUID


def _topic_id(raw, name: str):
    return raw.request(3, 12, {"topics": [{"topic_id": ZERO_UUID, "name": name}], "allow_auto_topic_creation": False,
                               "include_topic_authorized_operations": False}).topics[0].topic_id


def _create(broker, name: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    for future in admin.create_topics([NewTopic(name, 2)]).values():
        future.result(30)


def test_commit_and_fetch_by_topic_id(trafka_broker):
    name, group = f"by-id-{uuid.uuid4().hex[:8]}", f"by-id-group-{uuid.uuid4().hex[:6]}"
    _create(trafka_broker, name)
    missing = uuid.uuid4()
    with RawClient(trafka_broker.bootstrap_servers) as raw:
        topic_id = _topic_id(raw, name)
        committed = raw.request(8, 10, {
            "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [
                {"topic_id": topic_id, "partitions": [
                    {"partition_index": 0, "committed_offset": 4, "committed_leader_epoch": -1, "committed_metadata": "m"},
                    {"partition_index": 1, "committed_offset": 9, "committed_leader_epoch": -1, "committed_metadata": None}]},
                {"topic_id": missing, "partitions": [
                    {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1, "committed_metadata": None}]},
            ]})
        assert [(t.topic_id, [(p.partition_index, p.error_code) for p in t.partitions]) for t in committed.topics] == [
            (topic_id, [(0, E.NONE), (1, E.NONE)]), (missing, [(0, E.UNKNOWN_TOPIC_ID)])]
        asked = raw.request(9, 10, {"groups": [{"group_id": group, "member_id": None, "member_epoch": -1, "topics": [
            {"topic_id": topic_id, "partition_indexes": [0, 1]}, {"topic_id": missing, "partition_indexes": [3]}]}],
            "require_stable": False})
        [answer] = asked.groups
        assert answer.error_code == E.NONE
        assert [(t.topic_id, [(p.partition_index, p.committed_offset, p.metadata, p.error_code) for p in t.partitions])
                for t in answer.topics] == [(topic_id, [(0, 4, "m", E.NONE), (1, 9, "", E.NONE)]),
                                            (missing, [(3, -1, "", E.UNKNOWN_TOPIC_ID)])]
        every = raw.request(9, 10, {"groups": [{"group_id": group, "member_id": None, "member_epoch": -1, "topics": None}],
                                    "require_stable": False}).groups[0]
        assert [(t.topic_id, sorted(p.committed_offset for p in t.partitions)) for t in every.topics] == [(topic_id, [4, 9])]
        # the same offsets read by name at v9
        by_name = raw.request(9, 9, {"groups": [{"group_id": group, "member_id": None, "member_epoch": -1,
                                                 "topics": [{"name": name, "partition_indexes": [0, 1]}]}],
                                     "require_stable": False}).groups[0]
        assert [(t.name, [p.committed_offset for p in t.partitions]) for t in by_name.topics] == [(name, [4, 9])]
