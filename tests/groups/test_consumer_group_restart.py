"""KIP-848 consumer groups survive a restart: their records in __consumer_offsets (Kafka's types
3-8) bring back the group epoch, the assignment epoch, every member with its epoch, subscription,
assignment and target, and the group's committed offsets; deletes and protocol conversions are
tombstoned. The raw protocol, so each epoch can be checked exactly, against a real broker that
is stopped and started again."""

from __future__ import annotations

import uuid

from testkit.groups import create_topic
from trafka.testing.rawwire import RawClient
from trafka.wire.errors import ErrorCode


def heartbeat(raw: RawClient, group: str, member_id: str, epoch: int, *, topics=None, owned=None, instance_id=None):
    body = raw.request(68, 1, {
        "group_id": group, "member_id": member_id, "member_epoch": epoch, "instance_id": instance_id, "rack_id": None,
        "rebalance_timeout_ms": 60000 if epoch == 0 else -1, "subscribed_topic_names": topics,
        "subscribed_topic_regex": None, "server_assignor": None,
        "topic_partitions": None if owned is None else [{"topic_id": t, "partitions": sorted(ps)} for t, ps in owned.items()],
    })
    return body


def owned(response) -> dict[uuid.UUID, set[int]]:
    return {tp.topic_id: set(tp.partitions) for tp in response.assignment.topic_partitions}


def describe(raw: RawClient, group: str):
    [described] = raw.request(69, 1, {"group_ids": [group], "include_authorized_operations": False}).groups
    return described


def commit(raw: RawClient, group: str, member_id: str, epoch: int, topic: str, partition: int, offset: int) -> int:
    body = raw.request(8, 9, {
        "group_id": group, "generation_id_or_member_epoch": epoch, "member_id": member_id, "group_instance_id": None,
        "topics": [{"name": topic, "partitions": [
            {"partition_index": partition, "committed_offset": offset, "committed_leader_epoch": -1, "committed_metadata": "m"}]}],
    })
    return body.topics[0].partitions[0].error_code


def committed(raw: RawClient, group: str, topic: str, partition: int) -> int:
    [answer] = raw.request(9, 9, {"groups": [{"group_id": group, "member_id": None, "member_epoch": -1, "topics": [
        {"name": topic, "partition_indexes": [partition]}]}], "require_stable": False}).groups
    return answer.topics[0].partitions[0].committed_offset


def listed_types(raw: RawClient) -> dict[str, str]:
    body = raw.request(16, 5, {"states_filter": [], "types_filter": []})
    return {g.group_id: g.group_type for g in body.groups}


def test_members_epochs_assignments_and_offsets_survive_a_restart(broker):
    create_topic(broker.bootstrap_servers, "t", 4)
    with RawClient(broker.bootstrap_servers) as raw:
        a = heartbeat(raw, "g", "member-a", 0, topics=["t"], owned={})
        assert a.error_code == ErrorCode.NONE and a.member_epoch == 1 and sum(map(len, owned(a).values())) == 4
        b = heartbeat(raw, "g", "member-b", 0, topics=["t"], owned={}, instance_id="static-b")
        assert b.error_code == ErrorCode.NONE and b.member_epoch == 2
        # member-a must revoke two partitions before member-b gets them.
        a_revoking = heartbeat(raw, "g", "member-a", 1, owned=owned(a))
        a_now = owned(a_revoking)
        a_done = heartbeat(raw, "g", "member-a", 1, owned=a_now)
        assert a_done.member_epoch == 2
        b_done = heartbeat(raw, "g", "member-b", 2, owned={})
        assert b_done.error_code == ErrorCode.NONE and b_done.assignment is not None
        b_now = owned(b_done)
        assert sum(len(ps) for ps in b_now.values()) == 2
        assert commit(raw, "g", "member-a", 2, "t", 0, 42) == ErrorCode.NONE
        before = describe(raw, "g")
    assert before.group_state == "Stable"

    broker.restart()

    with RawClient(broker.bootstrap_servers) as raw:
        after = describe(raw, "g")
        assert (after.group_state, after.group_epoch, after.assignment_epoch) == ("Stable", 2, 2)
        assert {m.member_id: (m.member_epoch, m.instance_id, m.subscribed_topic_names) for m in after.members} == {
            "member-a": (2, None, ["t"]), "member-b": (2, "static-b", ["t"])}
        assert [(m.member_id, m.assignment, m.target_assignment) for m in after.members] == [
            (m.member_id, m.assignment, m.target_assignment) for m in before.members]
        # The members carry on where they were: same epochs, nothing fenced, nothing moves.
        again = heartbeat(raw, "g", "member-a", 2, owned=a_now)
        assert (again.error_code, again.member_epoch, again.assignment) == (ErrorCode.NONE, 2, None)
        again_b = heartbeat(raw, "g", "member-b", 2, owned=b_now, instance_id="static-b")
        assert (again_b.error_code, again_b.member_epoch) == (ErrorCode.NONE, 2)
        assert committed(raw, "g", "t", 0) == 42
        assert commit(raw, "g", "member-a", 1, "t", 0, 43) == ErrorCode.STALE_MEMBER_EPOCH
        assert commit(raw, "g", "member-b", 2, "t", 1, 7) == ErrorCode.NONE
        # A new member after the restart: the group epoch moves on from the persisted one.
        c = heartbeat(raw, "g", "member-c", 0, topics=["t"], owned={})
        assert c.error_code == ErrorCode.NONE and c.member_epoch == 3
        assert listed_types(raw) == {"g": "consumer"}
    assert "loaded 0 classic and 1 consumer groups" in broker.log_text()
    assert "skipping" not in broker.log_text()  # every record read back


def test_deleted_and_converted_groups_stay_so_after_a_restart(broker):
    create_topic(broker.bootstrap_servers, "t", 1)
    with RawClient(broker.bootstrap_servers) as raw:
        # An empty classic group (offsets only) becomes a consumer group when a member joins it.
        simple = raw.request(8, 9, {"group_id": "upgraded", "generation_id_or_member_epoch": -1, "member_id": "",
                                    "group_instance_id": None, "topics": [{"name": "t", "partitions": [
                                        {"partition_index": 0, "committed_offset": 5, "committed_metadata": ""}]}]})
        assert simple.topics[0].partitions[0].error_code == ErrorCode.NONE
        assert heartbeat(raw, "upgraded", "m", 0, topics=["t"], owned={}).error_code == ErrorCode.NONE
        # A consumer group that is deleted once empty.
        assert heartbeat(raw, "doomed", "m", 0, topics=["t"], owned={}).error_code == ErrorCode.NONE
        assert commit(raw, "doomed", "m", 1, "t", 0, 9) == ErrorCode.NONE
        assert heartbeat(raw, "doomed", "m", -1).error_code == ErrorCode.NONE
        [deleted] = raw.request(42, 2, {"groups_names": ["doomed"]}).results
        assert deleted.error_code == ErrorCode.NONE
        # An empty consumer group that a classic member joins becomes a classic group.
        assert heartbeat(raw, "downgraded", "m", 0, topics=["t"], owned={}).error_code == ErrorCode.NONE
        assert heartbeat(raw, "downgraded", "m", -1).error_code == ErrorCode.NONE
        joined = raw.request(11, 5, {"group_id": "downgraded", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
                                     "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
                                     "protocols": [{"name": "range", "metadata": b""}]})
        assert joined.error_code == ErrorCode.MEMBER_ID_REQUIRED
        assert listed_types(raw) == {"upgraded": "consumer", "downgraded": "classic"}
        assert commit(raw, "downgraded", "", -1, "t", 0, 11) == ErrorCode.NONE  # kept by the classic group

    broker.restart()

    with RawClient(broker.bootstrap_servers) as raw:
        assert listed_types(raw) == {"upgraded": "consumer", "downgraded": "classic"}
        upgraded = describe(raw, "upgraded")
        assert upgraded.error_code == ErrorCode.NONE and [m.member_id for m in upgraded.members] == ["m"]
        assert committed(raw, "upgraded", "t", 0) == 5
        assert describe(raw, "doomed").error_code == ErrorCode.GROUP_ID_NOT_FOUND
        assert committed(raw, "doomed", "t", 0) == -1
        assert committed(raw, "downgraded", "t", 0) == 11
        assert describe(raw, "downgraded").error_message == "Group downgraded is not a consumer group."


def test_trafka_groups_shows_consumer_groups_from_the_data_dir(broker):
    import subprocess
    import sys

    create_topic(broker.bootstrap_servers, "t", 2)
    with RawClient(broker.bootstrap_servers) as raw:
        joined = heartbeat(raw, "shown", "member-x", 0, topics=["t"], owned={})
        assert joined.error_code == ErrorCode.NONE
        assert commit(raw, "shown", "member-x", joined.member_epoch, "t", 1, 0) == ErrorCode.NONE
        client_id = raw.client_id
    out = subprocess.run([sys.executable, "-m", "trafka", "groups", "--data-dir", str(broker.data_dir), "--group", "shown"],
                         capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    states, members, offsets = ([line.split() for line in block.strip().splitlines()[1:]]
                                for block in out.stdout.split("\n\n")[1:])
    assert states == [["shown", "Stable", "consumer", "-", "1", "1", "-"]]
    assert members == [["shown", "member-x", "-", client_id, "/127.0.0.1", "t", "t-0,t-1"]]
    assert offsets == [["shown", "t", "0", "-", "0", "-", "member-x"], ["shown", "t", "1", "0", "0", "0", "member-x"]]


def test_consumer_group_offsets_expire_as_kafkas_and_the_empty_group_goes(tmp_path):
    """offsets.retention.minutes for a consumer group: an offset of a topic no member subscribes
    to expires that long after its commit; once the group is empty the rest follow and the group
    is deleted (tombstones, so it stays gone after a restart). Broker time is moved, not waited."""
    from trafka.testing import TrafkaBroker

    config = {"offsets.topic.num.partitions": 2, "offsets.retention.minutes": 1,
              "offsets.retention.check.interval.ms": 1000, "group.consumer.session.timeout.ms": 600_000}
    with TrafkaBroker(data_dir=tmp_path / "data", config=config) as broker:
        create_topic(broker.bootstrap_servers, "t", 1)
        create_topic(broker.bootstrap_servers, "u", 1)
        with RawClient(broker.bootstrap_servers) as raw:
            joined = heartbeat(raw, "aging", "m", 0, topics=["t"], owned={})
            assert commit(raw, "aging", "m", joined.member_epoch, "t", 0, 4) == ErrorCode.NONE
            assert commit(raw, "aging", "m", joined.member_epoch, "u", 0, 6) == ErrorCode.NONE
            broker.advance_clock(120_000)
            assert (committed(raw, "aging", "t", 0), committed(raw, "aging", "u", 0)) == (4, -1)
            assert heartbeat(raw, "aging", "m", -1).error_code == ErrorCode.NONE
            broker.advance_clock(120_000)
            assert committed(raw, "aging", "t", 0) == -1
            assert "aging" not in listed_types(raw)
        broker.restart()
        with RawClient(broker.bootstrap_servers) as raw:
            assert "aging" not in listed_types(raw)
            assert describe(raw, "aging").error_code == ErrorCode.GROUP_ID_NOT_FOUND
