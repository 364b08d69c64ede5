"""Real group.protocol=consumer clients (Java kafka-clients 4.3.0, confluent-kafka 2.16.1) across a
broker restart: their commits are kept, and the group comes back with the same members, epochs
and assignment, so the running consumers carry on without being fenced or rebalanced."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer

from testkit.groups import create_topic, produce
from testkit.java import JavaKafka
from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_until

WAIT_S = 60
CLIENTS = ["java", "confluent"]


class JavaMember:
    def __init__(self, kafka: JavaKafka, bootstrap: str, group: str, topic: str):
        self.consumer = kafka.make_consumer({
            "bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
            "enable.auto.commit": "false", "auto.offset.reset": "earliest"})
        self.consumer.subscribe([topic])

    def poll(self) -> list[str]:
        return [r.value.decode() for r in self.consumer.poll(100)]

    def assignment(self) -> set[tuple[str, int]]:
        return set(self.consumer.assignment())

    def commit(self) -> None:
        self.consumer.commitSync()

    def close(self) -> None:
        self.consumer.close()


class ConfluentMember:
    def __init__(self, bootstrap: str, group: str, topic: str):
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
                                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        self.consumer.subscribe([topic])

    def poll(self) -> list[str]:
        message = self.consumer.poll(0.1)
        return [] if message is None or message.error() else [message.value().decode()]

    def assignment(self) -> set[tuple[str, int]]:
        return {(tp.topic, tp.partition) for tp in self.consumer.assignment()}

    def commit(self) -> None:
        self.consumer.commit(asynchronous=False)

    def close(self) -> None:
        self.consumer.close()


def member(client: str, request, bootstrap: str, group: str, topic: str):
    if client == "java":
        return JavaMember(request.getfixturevalue("java"), bootstrap, group, topic)
    return ConfluentMember(bootstrap, group, topic)


def consume(member, count: int) -> list[str]:
    got: list[str] = []
    wait_until(lambda: got.extend(member.poll()) or len(got) >= count, WAIT_S, f"{count} records")
    return got


def described(bootstrap: str, group: str):
    with RawClient(bootstrap) as raw:
        [group_description] = raw.request(69, 1, {"group_ids": [group], "include_authorized_operations": False}).groups
    return group_description


def membership(description) -> dict[str, tuple[int, list]]:
    return {m.member_id: (m.member_epoch, [(tp.topic_name, tp.partitions) for tp in m.assignment.topic_partitions])
            for m in description.members}


@pytest.mark.parametrize("client", CLIENTS)
def test_commits_members_and_assignment_survive_a_restart(consumer_broker, request, client):
    bootstrap = consumer_broker.bootstrap_servers
    group, topic = f"durable-{client}", "four"
    create_topic(bootstrap, topic, 4)
    produce(bootstrap, topic, [f"a{i}" for i in range(8)], partitions=4)
    first = member(client, request, bootstrap, group, topic)
    try:
        assert sorted(consume(first, 8)) == sorted(f"a{i}" for i in range(8))
        first.commit()
        wait_until(lambda: described(bootstrap, group).group_state == "Stable", WAIT_S, "a Stable group")
        before = described(bootstrap, group)
        assert [len(parts) for _, (_, [(_, parts)]) in membership(before).items()] == [4]

        consumer_broker.restart()

        # The running consumer reconnects and heartbeats on with the epoch it had: not fenced,
        # no new member, no new group epoch, the same four partitions.
        produce(bootstrap, topic, [f"b{i}" for i in range(4)], partitions=4)
        assert sorted(consume(first, 4)) == ["b0", "b1", "b2", "b3"]
        after = described(bootstrap, group)
        assert (after.group_state, after.group_epoch, after.assignment_epoch) == ("Stable", before.group_epoch,
                                                                                    before.assignment_epoch)
        assert membership(after) == membership(before)
        assert first.assignment() == {(topic, p) for p in range(4)}
        first.commit()
    finally:
        first.close()
    consumer_broker.restart()
    # A new consumer of the group resumes at the offsets committed before and after the first restart.
    produce(bootstrap, topic, [f"c{i}" for i in range(4)], partitions=4)
    second = member(client, request, bootstrap, group, topic)
    try:
        assert sorted(consume(second, 4)) == ["c0", "c1", "c2", "c3"]
        for _ in range(5):
            assert not [v for v in second.poll() if not v.startswith("c")]
    finally:
        second.close()
