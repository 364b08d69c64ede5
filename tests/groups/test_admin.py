"""Groups through admin clients: describe, list (by state), delete, delete offsets."""

from __future__ import annotations

import pytest
from confluent_kafka import ConsumerGroupState
from confluent_kafka.admin import AdminClient, ConfigResource
from kafka import KafkaAdminClient, TopicPartition
from kafka.structs import OffsetAndMetadata

from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_until
from trafka.wire.errors import ErrorCode
from testkit.groups import PolledConsumer, create_topic, group_consumer


@pytest.fixture
def admin(broker):
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    yield client
    client.close()


def _commit_without_membership(bootstrap: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    consumer = group_consumer(bootstrap, None, group)
    consumer.assign([TopicPartition(topic, p) for p in offsets])
    consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()})
    consumer.close(autocommit=False)


def test_consumer_offsets_is_an_internal_compacted_topic(broker, admin):
    topics = {t["name"]: t for t in admin.describe_topics()}
    assert topics["__consumer_offsets"]["is_internal"] is True
    assert len(topics["__consumer_offsets"]["partitions"]) == 10  # offsets.topic.num.partitions
    configs = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    resource = ConfigResource(ConfigResource.Type.TOPIC, "__consumer_offsets")
    described = configs.describe_configs([resource])[resource].result(timeout=10)
    assert described["cleanup.policy"].value == "compact"


def test_describe_list_and_delete_groups_with_kafka_python(broker, admin):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "t", 2)
    active = PolledConsumer(bootstrap, "t", "active")
    try:
        wait_until(lambda: active.assignment == {0, 1}, 20, "an assignment")
        _commit_without_membership(bootstrap, "idle", "t", {0: 3})

        described = admin.describe_groups(["active", "idle", "never"])
        assert described["active"]["group_state"] == "Stable"
        assert described["active"]["protocol_type"] == "consumer"
        assert described["active"]["protocol_data"] in ("range", "roundrobin", "sticky")
        [member] = described["active"]["members"]
        assert member["client_host"] == "/127.0.0.1"
        assert member["member_metadata"]["topics"] == ["t"]
        assert sorted(p for a in member["member_assignment"]["assigned_partitions"] for p in a["partitions"]) == [0, 1]
        assert described["idle"]["group_state"] == "Empty" and described["idle"]["members"] == []
        assert described["never"]["group_state"] == "Dead"

        listed = {g["group_id"]: g for g in admin.list_groups()}
        assert listed["active"]["group_state"] == "Stable" and listed["idle"]["group_state"] == "Empty"
        assert {g["group_id"] for g in admin.list_groups(states_filter=["Empty"])} == {"idle"}

        result = admin.delete_groups(["active", "idle", "never"])
        assert result["idle"] == "OK"
        assert "NonEmptyGroup" in str(result["active"]) and "GroupIdNotFound" in str(result["never"])
        assert "idle" not in {g["group_id"] for g in admin.list_groups()}
    finally:
        active.close()
    # Once its last member left, the group can go too.
    wait_until(lambda: admin.describe_groups(["active"])["active"]["group_state"] == "Empty", 10, "an empty group")
    assert admin.delete_groups(["active"])["active"] == "OK"
    broker.restart()  # the tombstones keep them deleted
    fresh = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        assert {g["group_id"] for g in fresh.list_groups()} == set()
    finally:
        fresh.close()


def test_offset_delete_refuses_subscribed_topics(broker, admin):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "subscribed", 1)
    create_topic(bootstrap, "other", 1)
    _commit_without_membership(bootstrap, "od", "other", {0: 4})
    member = PolledConsumer(bootstrap, "subscribed", "od")
    try:
        wait_until(lambda: member.assignment == {0}, 20, "an assignment")
        result = admin.delete_group_offsets("od", [TopicPartition("subscribed", 0), TopicPartition("other", 0)])
        assert "GroupSubscribedToTopic" in str(result[TopicPartition("subscribed", 0)])
        assert result[TopicPartition("other", 0)] in (None, "OK") or "NoError" in str(result[TopicPartition("other", 0)])
        assert TopicPartition("other", 0) not in admin.list_group_offsets(["od"])["od"]
    finally:
        member.close()


def test_offset_delete_reads_a_short_subscription_by_its_version_0_fields(broker):
    """@platformatic/kafka's members send a subscription marked version 1 that carries only the
    version-0 fields (topics, user data). Kafka reads every subscription's topics as version 0,
    the prefix of all versions, so the group is subscribed to its topics and no others."""
    import struct

    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "read", 1)
    create_topic(bootstrap, "unread", 1)
    _commit_without_membership(bootstrap, "short", "unread", {0: 2})
    topic = b"read"
    short_v1 = struct.pack(">hih", 1, 1, len(topic)) + topic + struct.pack(">i", -1)  # no owned partitions
    join = {"group_id": "short", "session_timeout_ms": 30000, "rebalance_timeout_ms": 5000, "group_instance_id": None,
            "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": short_v1}]}
    with RawClient(bootstrap) as raw:
        member_id = raw.request(11, 5, {**join, "member_id": ""}).member_id
        joined = raw.request(11, 5, {**join, "member_id": member_id})
        assert joined.error_code == ErrorCode.NONE and joined.leader == member_id
        answer = raw.request(47, 0, {"group_id": "short", "topics": [
            {"name": "read", "partitions": [{"partition_index": 0}]},
            {"name": "unread", "partitions": [{"partition_index": 0}]}]})
        assert answer.error_code == ErrorCode.NONE
        errors = {t.name: t.partitions[0].error_code for t in answer.topics}
        assert errors == {"read": ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, "unread": ErrorCode.NONE}


def test_list_describe_and_delete_groups_with_confluent_admin(broker):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "c", 1)
    _commit_without_membership(bootstrap, "c-idle", "c", {0: 1})
    active = PolledConsumer(bootstrap, "c", "c-active")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        wait_until(lambda: active.assignment == {0}, 20, "an assignment")
        listed = admin.list_consumer_groups(states={ConsumerGroupState.STABLE}).result(timeout=10)
        assert [g.group_id for g in listed.valid] == ["c-active"]
        described = admin.describe_consumer_groups(["c-active", "c-idle"])
        active_group = described["c-active"].result(timeout=10)
        assert active_group.state == ConsumerGroupState.STABLE
        assert [tp.partition for tp in active_group.members[0].assignment.topic_partitions] == [0]
        assert described["c-idle"].result(timeout=10).state == ConsumerGroupState.EMPTY
        deleted = admin.delete_consumer_groups(["c-idle"])
        deleted["c-idle"].result(timeout=10)
        with pytest.raises(Exception, match="NON_EMPTY_GROUP"):
            admin.delete_consumer_groups(["c-active"])["c-active"].result(timeout=10)
    finally:
        active.close()


def test_deleting_a_topic_drops_its_committed_offsets(broker, admin):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "doomed", 2)
    create_topic(bootstrap, "kept", 1)
    _commit_without_membership(bootstrap, "both", "doomed", {0: 4, 1: 2})
    _commit_without_membership(bootstrap, "both", "kept", {0: 7})
    _commit_without_membership(bootstrap, "only-doomed", "doomed", {0: 1})

    admin.delete_topics(["doomed"])

    def committed(client, group: str) -> dict:
        offsets = client.list_group_offsets({group: None})[group]
        return {(tp.topic, tp.partition): meta.offset for tp, meta in offsets.items()}

    assert committed(admin, "both") == {("kept", 0): 7}
    # An empty group whose only offsets went with the topic goes too, as in Kafka.
    assert "only-doomed" not in {g["group_id"] for g in admin.list_groups()}
    broker.restart()  # the tombstones keep them gone
    fresh = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        assert committed(fresh, "both") == {("kept", 0): 7}
        # A topic created again under the same name starts with no committed position.
        create_topic(bootstrap, "doomed", 2)
        assert committed(fresh, "both") == {("kept", 0): 7}
    finally:
        fresh.close()
