"""Group types in ListGroups v5 and DescribeGroups v6 (KIP-848, KIP-1043), against classic groups:
the raw protocol for the exact fields, confluent-kafka's admin client for what a user sees."""

from __future__ import annotations

from confluent_kafka import ConsumerGroupState, ConsumerGroupType
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient

from trafka.testing.waiting import wait_until
from testkit.groups import PolledConsumer, create_topic
from trafka.testing.rawwire import RawClient
from trafka.wire.errors import ErrorCode


def _commit_without_membership(raw: RawClient, group: str, topic: str) -> None:
    body = raw.request(8, 8, {
        "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": topic, "partitions": [
            {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1, "committed_metadata": ""}
        ]}],
    })
    assert body.topics[0].partitions[0].error_code == ErrorCode.NONE


def _listed(raw: RawClient, version: int = 5, states=(), types=()) -> dict:
    body = raw.request(16, version, {"states_filter": list(states), "types_filter": list(types)})
    assert body.error_code == ErrorCode.NONE
    return {g.group_id: g for g in body.groups}


def test_list_groups_v5_answers_and_filters_group_types(broker):
    create_topic(broker.bootstrap_servers, "t", 1)
    with RawClient(broker.bootstrap_servers) as raw:
        _commit_without_membership(raw, "simple", "t")
        listed = _listed(raw)
        assert (listed["simple"].group_type, listed["simple"].group_state, listed["simple"].protocol_type) == ("classic", "Empty", "")
        # Types match case-insensitively; an unknown type matches nothing, as in Kafka.
        assert set(_listed(raw, types=["CLASSIC"])) == {"simple"}
        assert _listed(raw, types=["consumer"]) == {}
        assert _listed(raw, types=["no-such-type"]) == {}
        assert set(_listed(raw, states=[" empty "], types=["classic"])) == {"simple"}
        assert _listed(raw, states=["Stable"], types=["classic"]) == {}
        assert _listed(raw, version=4)["simple"].group_type == ""  # not on the wire before v5


def test_describe_groups_v6_reports_unknown_groups_as_not_found(broker):
    create_topic(broker.bootstrap_servers, "t", 1)
    with RawClient(broker.bootstrap_servers) as raw:
        _commit_without_membership(raw, "simple", "t")
        [simple, unknown] = raw.request(15, 6, {"groups": ["simple", "nope"], "include_authorized_operations": False}).groups
        assert (simple.error_code, simple.error_message, simple.group_state) == (ErrorCode.NONE, None, "Empty")
        assert (unknown.error_code, unknown.error_message, unknown.group_state) == (
            ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found.", "Dead")
        # Up to v5 Kafka reports an unknown group as Dead without an error.
        [old] = raw.request(15, 5, {"groups": ["nope"], "include_authorized_operations": False}).groups
        assert (old.error_code, old.group_state) == (ErrorCode.NONE, "Dead")


def test_describe_groups_gives_an_unknown_groups_authorized_operations_below_v6(broker):
    """KafkaApis fills in the authorized operations (v3+, when asked) of every group answered
    without an error: below v6 an unknown group is Dead with no error, so it gets them too
    (READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS without an authorizer); from v6 it
    is GROUP_ID_NOT_FOUND and keeps the INT32_MIN of "not computed"."""
    every_group_operation = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11)
    with RawClient(broker.bootstrap_servers) as raw:
        for version in (3, 4, 5):
            [unknown] = raw.request(15, version, {"groups": ["nope"], "include_authorized_operations": True}).groups
            assert (unknown.error_code, unknown.group_state, unknown.authorized_operations) == (
                ErrorCode.NONE, "Dead", every_group_operation), version
            [unasked] = raw.request(15, version, {"groups": ["nope"], "include_authorized_operations": False}).groups
            assert unasked.authorized_operations == -2**31
        [v6] = raw.request(15, 6, {"groups": ["nope"], "include_authorized_operations": True}).groups
        assert (v6.error_code, v6.authorized_operations) == (ErrorCode.GROUP_ID_NOT_FOUND, -2**31)


def test_confluent_admin_lists_classic_groups_by_type(broker):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "ct", 1)
    active = PolledConsumer(bootstrap, "ct", "classic-active")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        wait_until(lambda: active.assignment == {0}, 20, "an assignment")
        listed = admin.list_consumer_groups(types={ConsumerGroupType.CLASSIC}).result(timeout=10)
        assert [(g.group_id, g.type, g.state) for g in listed.valid] == [
            ("classic-active", ConsumerGroupType.CLASSIC, ConsumerGroupState.STABLE)]
        assert admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}).result(timeout=10).valid == []
        described = admin.describe_consumer_groups(["classic-active"])["classic-active"].result(timeout=10)
        assert described.type == ConsumerGroupType.CLASSIC
    finally:
        active.close()


def test_consumer_protocol_groups_are_listed_as_consumer_and_not_described_as_classic(broker):
    create_topic(broker.bootstrap_servers, "t", 1)
    with RawClient(broker.bootstrap_servers) as raw:
        joined = raw.request(68, 1, {
            "group_id": "modern", "member_id": "m1", "member_epoch": 0, "instance_id": None, "rack_id": None,
            "rebalance_timeout_ms": 60000, "subscribed_topic_names": ["t"], "subscribed_topic_regex": None,
            "server_assignor": None, "topic_partitions": [],
        })
        assert joined.error_code == ErrorCode.NONE
        _commit_without_membership(raw, "simple", "t")
        listed = _listed(raw)
        assert (listed["modern"].group_type, listed["modern"].protocol_type) == ("consumer", "consumer")
        assert listed["modern"].group_state in ("Assigning", "Reconciling", "Stable")
        assert set(_listed(raw, types=["Consumer"])) == {"modern"}
        assert set(_listed(raw, types=["classic"])) == {"simple"}
        assert set(_listed(raw, states=[listed["modern"].group_state], types=["consumer"])) == {"modern"}
        [v6] = raw.request(15, 6, {"groups": ["modern"], "include_authorized_operations": False}).groups
        assert (v6.error_code, v6.error_message, v6.group_state) == (
            ErrorCode.GROUP_ID_NOT_FOUND, "Group modern is not a classic group.", "Dead")
        [v5] = raw.request(15, 5, {"groups": ["modern"], "include_authorized_operations": False}).groups
        assert (v5.error_code, v5.group_state, v5.members) == (ErrorCode.NONE, "Dead", [])
    # kafka-python's admin client reads the same answers.
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    try:
        listed = {g["group_id"]: g for g in admin.list_groups()}
        assert (listed["modern"]["group_type"], listed["simple"]["group_type"]) == ("consumer", "classic")
        described = admin.describe_groups(["modern"])["modern"]
        assert described["group_state"] == "Dead" and "GroupIdNotFound" in described["error"]
        assert described["authorized_operations"] is None or described["authorized_operations"] == []
    finally:
        admin.close()
