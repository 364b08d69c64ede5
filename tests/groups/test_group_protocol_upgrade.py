"""Offline upgrade and downgrade between the classic protocol and KIP-848 with real clients: a
group's consumers move from group.protocol=classic to consumer once the group is empty, and back,
keeping the committed offsets, across a broker restart. (Groups with members of both
protocols: tests/groups/test_online_migration.py.)"""

from __future__ import annotations

from confluent_kafka import Consumer

from testkit.groups import create_topic, produce
from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_until

WAIT_S = 60


def confluent(bootstrap: str, group: str, protocol: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": protocol,
                     "enable.auto.commit": False, "auto.offset.reset": "earliest"})


def consume(consumer: Consumer, count: int) -> list[str]:
    got: list[str] = []

    def more():
        message = consumer.poll(0.1)
        if message is not None and not message.error():
            got.append(message.value().decode())
        return len(got) >= count

    wait_until(more, WAIT_S, f"{count} records")
    return got


def group_type(bootstrap: str, group: str) -> str | None:
    with RawClient(bootstrap) as raw:
        body = raw.request(16, 5, {"states_filter": [], "types_filter": []})
    return next((g.group_type for g in body.groups if g.group_id == group), None)


def test_an_empty_group_changes_protocol_and_keeps_its_offsets(consumer_broker):
    bootstrap = consumer_broker.bootstrap_servers
    create_topic(bootstrap, "t", 2)
    produce(bootstrap, "t", ["a0", "a1", "a2", "a3"], partitions=2)

    classic = confluent(bootstrap, "moving", "classic")
    classic.subscribe(["t"])
    assert sorted(consume(classic, 4)) == ["a0", "a1", "a2", "a3"]
    classic.commit(asynchronous=False)
    classic.close()
    assert group_type(bootstrap, "moving") == "classic"

    produce(bootstrap, "t", ["b0", "b1"], partitions=2)
    modern = confluent(bootstrap, "moving", "consumer")
    modern.subscribe(["t"])
    try:
        assert sorted(consume(modern, 2)) == ["b0", "b1"]  # from the classic group's commits
        assert group_type(bootstrap, "moving") == "consumer"
        modern.commit(asynchronous=False)
        # (A classic consumer joining now would be hosted by the consumer group: online
        # migration, tests/groups/test_online_migration.py.)
    finally:
        modern.close()

    consumer_broker.restart()
    assert group_type(bootstrap, "moving") == "consumer"
    produce(bootstrap, "t", ["c0", "c1"], partitions=2)
    # The group is empty again: a classic consumer takes it back, at the consumer members' commits.
    back = confluent(bootstrap, "moving", "classic")
    back.subscribe(["t"])
    try:
        assert sorted(consume(back, 2)) == ["c0", "c1"]
        assert group_type(bootstrap, "moving") == "classic"
        back.commit(asynchronous=False)
    finally:
        back.close()
    consumer_broker.restart()
    assert group_type(bootstrap, "moving") == "classic"
