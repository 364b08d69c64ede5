"""Share-group metadata is durable in `__consumer_offsets` (Kafka's record types 10-14): a
restart keeps the group, its members (their epochs and assignments) and an empty group, and
DeleteGroups after a restart deletes the group and its share-partitions' state. On the wire
(the raw client) and with confluent-kafka's admin client."""

from __future__ import annotations

import pytest

from testkit.groups import create_topic
from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient
from trafka.wire.types import ZERO_UUID

CONFIG = {"offsets.topic.num.partitions": 3, "share.coordinator.state.topic.num.partitions": 3,
          "group.share.heartbeat.interval.ms": 500}


@pytest.fixture
def broker(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", config=CONFIG) as running:
        create_topic(running.bootstrap_servers, "jobs", 3)
        yield running


def heartbeat(raw, member: str, epoch: int, topics=None):
    return raw.request(76, 1, {"group_id": "durable", "member_id": member, "member_epoch": epoch, "rack_id": None,
                               "subscribed_topic_names": topics})


def describe(raw):
    [group] = raw.request(77, 1, {"group_ids": ["durable"], "include_authorized_operations": False}).groups
    return group


def test_a_restart_keeps_the_share_group_and_its_members(broker):
    with RawClient(broker.bootstrap_servers) as raw:
        first = heartbeat(raw, "member-a", 0, ["jobs"])
        second = heartbeat(raw, "member-b", 0, ["jobs"])
        assert first.error_code == second.error_code == 0
        again = heartbeat(raw, "member-a", first.member_epoch)
        before = describe(raw)
    assert before.error_code == 0 and len(before.members) == 2
    broker.restart()
    with RawClient(broker.bootstrap_servers) as raw:
        after = describe(raw)
        assert after.error_code == 0
        assert after.group_epoch == before.group_epoch and after.assignment_epoch == before.assignment_epoch
        assert {(m.member_id, m.member_epoch) for m in after.members} == {(m.member_id, m.member_epoch) for m in before.members}
        assert {m.member_id: sorted((t.topic_id, sorted(t.partitions)) for t in m.assignment.topic_partitions)
                for m in after.members} == {m.member_id: sorted((t.topic_id, sorted(t.partitions))
                                                                for t in m.assignment.topic_partitions) for m in before.members}
        # The members go on with the epochs they had: no UNKNOWN_MEMBER_ID, no new join.
        resumed = heartbeat(raw, "member-a", again.member_epoch)
        assert (resumed.error_code, resumed.member_epoch) == (0, again.member_epoch)


def test_delete_groups_after_a_restart_deletes_the_group_and_its_state(broker):
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for i in range(30):
        producer.produce("jobs", b"j%d" % i, partition=i % 3)
    assert producer.flush(10) == 0
    with RawClient(broker.bootstrap_servers) as raw:
        topic_id = raw.request(3, 12, {"topics": [{"name": "jobs", "topic_id": ZERO_UUID}], "allow_auto_topic_creation": False,
                                       "include_topic_authorized_operations": False}).topics[0].topic_id
        joined = heartbeat(raw, "member-a", 0, ["jobs"])
        assert joined.error_code == 0
        parts = [{"partition_index": p, "acknowledgement_batches": []} for p in range(3)]
        fetched = raw.request(78, 1, {"group_id": "durable", "member_id": "member-a", "share_session_epoch": 0,
                                      "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100,
                                      "batch_size": 100, "forgotten_topics_data": [],
                                      "topics": [{"topic_id": topic_id, "partitions": parts}]})
        assert fetched.error_code == 0
        assert heartbeat(raw, "member-a", -1).error_code == 0
        offsets = _share_offsets(raw)
        assert sorted(offsets) == [0, 1, 2]  # the three share-partitions were created
    broker.restart()
    with RawClient(broker.bootstrap_servers) as raw:
        listed = raw.request(16, 5, {"states_filter": [], "types_filter": ["share"]}).groups
        assert [(g.group_id, g.group_state) for g in listed] == [("durable", "Empty")]
        deleted = raw.request(42, 2, {"groups_names": ["durable"]}).results
        assert [(r.group_id, r.error_code) for r in deleted] == [("durable", 0)]
        assert raw.request(16, 5, {"states_filter": [], "types_filter": ["share"]}).groups == []
    broker.restart()
    with RawClient(broker.bootstrap_servers) as raw:
        assert raw.request(16, 5, {"states_filter": [], "types_filter": ["share"]}).groups == []
        assert describe(raw).error_code == 69  # GROUP_ID_NOT_FOUND
        assert _share_offsets(raw) == {}  # no __share_group_state entry left behind


def _share_offsets(raw) -> dict[int, int]:
    """DescribeShareGroupOffsets (90) of the group's `jobs` partitions: partition -> start offset
    (those with no share-partition state answer -1 and are left out)."""
    answer = raw.request(90, 1, {"groups": [{"group_id": "durable", "topics": [{"topic_name": "jobs", "partitions": [0, 1, 2]}]}]})
    [group] = answer.groups
    return {p.partition_index: p.start_offset for t in group.topics for p in t.partitions if p.start_offset >= 0}
