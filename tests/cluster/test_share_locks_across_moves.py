"""Share groups split as Kafka splits them (KIP-932): the records in flight (acquired, their
locks, their delivery counts) are kept by the share-partition's leader, the broker leading the
topic partition (Kafka's SharePartitionManager); the share coordinator, the leader of a
`__share_group_state` partition, only persists. Moving `__share_group_state` used to drop every
acquisition lock: a second member acquired the records the first still held (delivery count 1
again), the first member's acknowledgement answered INVALID_RECORD_STATE, and repeated moves
let a poison record past its delivery limit."""

from __future__ import annotations

import time
import uuid

import pytest

from trafka.testing.rawwire import RawClient
from trafka.wire import records
from trafka.wire.errors import ErrorCode as E

pytestmark = pytest.mark.trafka_config({"share.coordinator.state.topic.num.partitions": 1,
                                        "group.share.delivery.count.limit": 3})
RECORDS = 2000


def share_fetch(raw: RawClient, group: str, member: str, topic_id, epoch: int, acks=None, max_records: int = 500):
    partition = {"partition_index": 0, "acknowledgement_batches": acks or []}
    return raw.request(78, 1, {"group_id": group, "member_id": member, "share_session_epoch": epoch,
                               "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 50 << 20, "max_records": max_records,
                               "batch_size": max_records, "forgotten_topics_data": [],
                               "topics": [{"topic_id": topic_id, "partitions": [partition]}]})


def acquired(answer) -> list[tuple[int, int, int]]:
    assert answer.error_code == E.NONE, answer
    return [(a.first_offset, a.last_offset, a.delivery_count)
            for t in answer.responses for p in t.partitions for a in p.acquired_records]


def move_share_state(cluster) -> None:
    state = cluster.partition_state("__share_group_state", 0)
    others = [r for r in state["isr"] if r != state["leader"]]
    cluster.move_leader("__share_group_state", 0, others[0])


def test_moving_the_share_coordinator_keeps_every_lock_and_delivery_count(trafka_cluster):
    topic, group = f"work-{uuid.uuid4().hex[:6]}", f"share-{uuid.uuid4().hex[:6]}"
    with RawClient(trafka_cluster.broker_addresses[0]) as admin:
        created = admin.request(19, 7, {"topics": [{"name": topic, "num_partitions": -1, "replication_factor": -1,
                                                    "assignments": [{"partition_index": 0, "broker_ids": [0, 1, 2]}],
                                                    "configs": []}], "timeout_ms": 10_000, "validate_only": False})
        assert created.topics[0].error_code == E.NONE
        topic_id = created.topics[0].topic_id
        config = admin.request(44, 1, {"resources": [{"resource_type": 32, "resource_name": group, "configs": [
            {"name": "share.auto.offset.reset", "config_operation": 0, "value": "earliest"}]}], "validate_only": False})
        assert config.responses[0].error_code == E.NONE, config
        for b in range(100):  # 2,000 records in 100 batches
            data = records.encode_batch([records.Record(None, b"r%d" % (b * 20 + i), (), int(time.time() * 1000))
                                         for i in range(20)])
            answer = admin.request(0, 8, {"transactional_id": None, "acks": -1, "timeout_ms": 10_000, "topic_data": [
                {"name": topic, "partition_data": [{"index": 0, "records": data}]}]})
            assert answer.responses[0].partition_responses[0].error_code == E.NONE
    leader = trafka_cluster.partition_state(topic, 0)["leader"]
    with RawClient(trafka_cluster.broker_addresses[leader]) as a, RawClient(trafka_cluster.broker_addresses[leader]) as b:
        held = acquired(share_fetch(a, group, "member-a", topic_id, 0))
        assert held and held[0][0] == 0 and all(count == 1 for _, _, count in held)
        last_held = held[-1][1]
        move_share_state(trafka_cluster)  # the share coordinator moves; the records stay locked
        taken = acquired(share_fetch(b, group, "member-b", topic_id, 0))
        assert taken and min(first for first, _, _ in taken) > last_held, (held, taken)
        assert all(count == 1 for _, _, count in taken)
        move_share_state(trafka_cluster)
        acks = [{"first_offset": first, "last_offset": last, "acknowledge_types": [1]} for first, last, _ in held]
        answer = share_fetch(a, group, "member-a", topic_id, 1, acks=acks, max_records=1)
        assert answer.error_code == E.NONE
        assert [p.acknowledge_error_code for t in answer.responses for p in t.partitions] == [E.NONE]
        # A poison record: released back by member b again and again, across more moves, it is
        # delivered at most the delivery limit (3) times, then archived.
        epoch, counts = 1, []
        poison = min(first for first, _, _ in taken)
        for round_ in range(5):
            move_share_state(trafka_cluster)
            release = [{"first_offset": poison, "last_offset": poison, "acknowledge_types": [2]}] if round_ else []
            got = acquired(share_fetch(b, group, "member-b", topic_id, epoch, acks=release, max_records=500))
            epoch += 1
            counts += [count for first, last, count in got if first <= poison <= last]
        assert counts and max(counts) <= 3, counts
