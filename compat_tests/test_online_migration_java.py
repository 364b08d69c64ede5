"""KIP-848 online migration with the Java 4.3 client on both sides: a KafkaConsumer of the
consumer protocol joins a group of a classic KafkaConsumer (its default eager `range`, the first
of range and cooperative-sticky); the group becomes a consumer group hosting the classic member,
the two share the partitions and read every record once; when the new one closes, the group is
classic again and the old one has every partition. Broker-side detail in
tests/groups/test_online_migration.py."""

from __future__ import annotations

import time

import pytest

from testkit.groups import create_topic, produce
from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient

pytestmark = pytest.mark.compat_client("java-4.3.0")


def group_type(bootstrap: str, group: str) -> str | None:
    with RawClient(bootstrap) as raw:
        body = raw.request(16, 5, {"states_filter": [], "types_filter": []})
    return next((g.group_type for g in body.groups if g.group_id == group), None)


def test_java_consumer_protocol_member_joins_and_leaves_a_java_classic_group(java_client_43, tmp_path):
    config = {"offsets.topic.num.partitions": 3, "group.consumer.heartbeat.interval.ms": 300,
              "group.initial.rebalance.delay.ms": 0}
    with TrafkaBroker(data_dir=tmp_path / "data", config=config) as broker:
        bootstrap = broker.bootstrap_servers
        create_topic(bootstrap, "jmig", 4)
        produce(bootstrap, "jmig", [f"a{i}" for i in range(8)], partitions=4)
        k = java_client_43
        common = {"bootstrap.servers": bootstrap, "group.id": "jmig-group", "enable.auto.commit": "false"}
        old = k.make_consumer({**common, "group.protocol": "classic", "session.timeout.ms": "10000",
                               "heartbeat.interval.ms": "500"})
        old.subscribe(["jmig"])
        seen = [r.value.decode() for r in old.poll_until(8, 60)]
        assert sorted(seen) == sorted(f"a{i}" for i in range(8))
        old.commitSync()
        assert group_type(bootstrap, "jmig-group") == "classic"

        new = k.make_consumer({**common, "group.protocol": "consumer"})
        new.subscribe(["jmig"])
        read: list[str] = []

        def poll_both() -> None:
            for consumer in (old, new):
                read.extend(r.value.decode() for r in consumer.poll(200))

        end = time.monotonic() + 60
        while True:
            poll_both()
            mine, theirs = {p for _, p in old.assignment()}, {p for _, p in new.assignment()}
            if mine and theirs and not mine & theirs and mine | theirs == {0, 1, 2, 3}:
                break
            assert time.monotonic() < end, f"assignments: classic {mine}, consumer protocol {theirs}"
        assert group_type(bootstrap, "jmig-group") == "consumer"
        produce(bootstrap, "jmig", [f"b{i}" for i in range(20)], partitions=4)
        end = time.monotonic() + 60
        while sorted(v for v in read if v.startswith("b")) != sorted(f"b{i}" for i in range(20)):
            assert time.monotonic() < end, f"read so far: {sorted(read)}"
            poll_both()
        assert len([v for v in read if v.startswith("b")]) == 20, "a record was read twice"
        old.commitSync()
        new.commitSync()

        new.close()
        end = time.monotonic() + 60
        while not ({p for _, p in old.assignment()} == {0, 1, 2, 3} and group_type(bootstrap, "jmig-group") == "classic"):
            assert time.monotonic() < end, f"classic member's assignment {old.assignment()}"
            old.poll(200)
        produce(bootstrap, "jmig", ["c0", "c1"], partitions=2)
        assert sorted(r.value.decode() for r in old.poll_until(2, 30)) == ["c0", "c1"]
        old.close()
