"""ConsumerGroupDescribe (KIP-848) and group types through admin clients: Java kafka-clients 4.3.0
Admin and confluent-kafka's AdminClient describe and list groups of the consumer protocol whose
members are real group.protocol=consumer consumers; the raw protocol for the error cases."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, ConsumerGroupState, ConsumerGroupType
from confluent_kafka.admin import AdminClient

from testkit.groups import PolledConsumer, create_topic
from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_until
from trafka.wire.errors import ErrorCode

WAIT_S = 60
GROUP_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11)  # READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS


class Members:
    """confluent-kafka consumers with group.protocol=consumer, polled until they settle."""

    def __init__(self, bootstrap: str):
        self.bootstrap = bootstrap
        self.consumers: list[Consumer] = []

    def add(self, group: str, topic: str, client_id: str) -> Consumer:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group, "group.protocol": "consumer",
                             "client.id": client_id, "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        consumer.subscribe([topic])
        self.consumers.append(consumer)
        return consumer

    def settle(self, sizes: list[int]) -> None:
        def done():
            for consumer in self.consumers:
                consumer.poll(0.05)
            got = [{(tp.topic, tp.partition) for tp in c.assignment()} for c in self.consumers]
            return [len(g) for g in got] == sizes and len(set().union(*got)) == sum(sizes)

        wait_until(done, WAIT_S, f"assignments of sizes {sizes}")

    def close(self) -> None:
        while self.consumers:
            self.consumers.pop().close()


@pytest.fixture
def members(consumer_broker):
    made = Members(consumer_broker.bootstrap_servers)
    yield made
    made.close()


def test_java_admin_describes_and_lists_consumer_protocol_groups(consumer_broker, members, java):
    bootstrap = consumer_broker.bootstrap_servers
    create_topic(bootstrap, "four", 4)
    members.add("modern", "four", "member-a")
    members.add("modern", "four", "member-b")
    members.settle([2, 2])
    classic = PolledConsumer(bootstrap, "four", "classic")
    admin = java.make_admin({"bootstrap.servers": bootstrap})
    try:
        wait_until(lambda: len(classic.assignment) == 4, WAIT_S, "the classic consumer's assignment")

        def described():
            return admin.describeConsumerGroups(["modern", "classic"])

        wait_until(lambda: described()["modern"]["state"] == "Stable", WAIT_S, "a Stable consumer group")
        groups = described()
        modern = groups["modern"]
        assert (modern["type"], modern["assignor"]) == ("Consumer", "uniform")
        assert modern["group_epoch"] == modern["assignment_epoch"] >= 2
        assert sorted(m["client_id"] for m in modern["members"]) == ["member-a", "member-b"]
        for member in modern["members"]:
            assert len(member["assignment"]) == 2 and member["target_assignment"] == member["assignment"]
            assert member["member_epoch"] == modern["group_epoch"]
            assert member["host"] == "/127.0.0.1"
        assert set().union(*(m["assignment"] for m in modern["members"])) == {("four", p) for p in range(4)}
        # A classic group is described through DescribeGroups, as against Kafka.
        assert (groups["classic"]["type"], groups["classic"]["state"]) == ("Classic", "Stable")
        assert groups["classic"]["members"][0]["assignment"] == {("four", p) for p in range(4)}

        listed = admin.listGroups()
        assert (listed["modern"]["type"], listed["modern"]["protocol"], listed["modern"]["state"]) == (
            "Consumer", "consumer", "Stable")
        assert (listed["classic"]["type"], listed["classic"]["protocol"]) == ("Classic", "consumer")
    finally:
        admin.close()
        classic.close()


def test_confluent_admin_describes_and_lists_consumer_protocol_groups(consumer_broker, members):
    bootstrap = consumer_broker.bootstrap_servers
    create_topic(bootstrap, "three", 3)
    members.add("modern-c", "three", "only-member")
    members.settle([3])
    admin = AdminClient({"bootstrap.servers": bootstrap})

    def described():
        return admin.describe_consumer_groups(["modern-c"])["modern-c"].result(timeout=10)

    wait_until(lambda: described().state == ConsumerGroupState.STABLE, WAIT_S, "a Stable consumer group")
    group = described()
    assert (group.type, group.partition_assignor) == (ConsumerGroupType.CONSUMER, "uniform")
    [member] = group.members
    assert member.client_id == "only-member"
    assert sorted((tp.topic, tp.partition) for tp in member.assignment.topic_partitions) == [("three", p) for p in range(3)]
    assert sorted(tp.partition for tp in member.target_assignment.topic_partitions) == [0, 1, 2]
    listed = admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}).result(timeout=10).valid
    assert [(g.group_id, g.type, g.state) for g in listed] == [("modern-c", ConsumerGroupType.CONSUMER, ConsumerGroupState.STABLE)]
    with pytest.raises(Exception, match="NON_EMPTY_GROUP"):
        admin.delete_consumer_groups(["modern-c"])["modern-c"].result(timeout=10)
    members.close()
    wait_until(lambda: described().state == ConsumerGroupState.EMPTY, WAIT_S, "an Empty consumer group")
    admin.delete_consumer_groups(["modern-c"])["modern-c"].result(timeout=10)
    assert admin.list_consumer_groups().result(timeout=10).valid == []


def _describe(raw: RawClient, version: int, *groups: str, operations: bool = False):
    return raw.request(69, version, {"group_ids": list(groups), "include_authorized_operations": operations}).groups


def test_consumer_group_describe_on_the_wire(consumer_broker):
    create_topic(consumer_broker.bootstrap_servers, "t", 2)
    with RawClient(consumer_broker.bootstrap_servers) as raw:
        joined = raw.request(68, 1, {
            "group_id": "g", "member_id": "m1", "member_epoch": 0, "instance_id": "i1", "rack_id": "r1",
            "rebalance_timeout_ms": 60000, "subscribed_topic_names": ["t"], "subscribed_topic_regex": None,
            "server_assignor": "range", "topic_partitions": [],
        })
        assert joined.error_code == ErrorCode.NONE
        commit = raw.request(8, 8, {"group_id": "classic", "generation_id_or_member_epoch": -1, "member_id": "",
                                    "group_instance_id": None, "topics": [{"name": "t", "partitions": [
                                        {"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}]}]})
        assert commit.topics[0].partitions[0].error_code == ErrorCode.NONE

        [group] = _describe(raw, 1, "g", operations=True)
        assert (group.error_code, group.error_message, group.group_state) == (ErrorCode.NONE, None, "Stable")
        assert (group.group_epoch, group.assignment_epoch, group.assignor_name) == (1, 1, "range")
        assert group.authorized_operations == GROUP_OPERATIONS
        [member] = group.members
        assert (member.member_id, member.instance_id, member.rack_id, member.member_epoch) == ("m1", "i1", "r1", 1)
        assert (member.subscribed_topic_names, member.subscribed_topic_regex, member.member_type) == (["t"], None, 1)
        for assignment in (member.assignment, member.target_assignment):
            [tp] = assignment.topic_partitions
            assert (tp.topic_name, tp.partitions) == ("t", [0, 1])
        [old] = _describe(raw, 0, "g")
        assert old.authorized_operations == -(2**31) and old.members[0].member_type == -1  # not on the wire in v0

        unknown, classic, empty = _describe(raw, 1, "nope", "classic", "")
        assert (unknown.error_code, unknown.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found.")
        assert (classic.error_code, classic.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND, "Group classic is not a consumer group.")
        assert empty.error_code == ErrorCode.INVALID_GROUP_ID
