"""Online migration between the classic and the consumer group protocols (KIP-848, Kafka's
group.consumer.migration.policy, bidirectional by default), with real clients: a consumer of the
consumer protocol (confluent-kafka, group.protocol=consumer) joins a group of classic consumers
(kafka-python, confluent-kafka, aiokafka) and the group becomes a consumer group that hosts
them; the partitions are shared and every record is read once; when it leaves, the group is a
classic group again and the classic members take every partition back."""

from __future__ import annotations

import pytest

from testkit.groups import PolledConsumer, create_topic, produce
from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_until

WAIT_S = 60
CONFIG = {"offsets.topic.num.partitions": 3, "group.consumer.heartbeat.interval.ms": 300}


def group_type(bootstrap: str, group: str) -> str | None:
    with RawClient(bootstrap) as raw:
        body = raw.request(16, 5, {"states_filter": [], "types_filter": []})
    return next((g.group_type for g in body.groups if g.group_id == group), None)


def member_types(bootstrap: str, group: str) -> list[int]:
    """ConsumerGroupDescribe v1's member types, sorted: 0 classic, 1 consumer protocol."""
    with RawClient(bootstrap) as raw:
        [described] = raw.request(69, 1, {"group_ids": [group], "include_authorized_operations": False}).groups
    return sorted(m.member_type for m in described.members)


@pytest.mark.parametrize("classic_client", ["kafka-python", "confluent-kafka", "aiokafka"])
def test_a_consumer_protocol_member_upgrades_a_classic_group_and_its_leaving_downgrades_it(tmp_path, classic_client):
    with TrafkaBroker(data_dir=tmp_path / "data", config=CONFIG) as broker:
        bootstrap = broker.bootstrap_servers
        create_topic(bootstrap, "work", 4)
        produce(bootstrap, "work", [f"a{i}" for i in range(8)], partitions=4)
        old = PolledConsumer(bootstrap, "work", "mixed", classic_client, enable_auto_commit=True,
                             auto_commit_interval_ms=200)
        new = None
        try:
            wait_until(lambda: len(old.values()) == 8, WAIT_S, "the classic consumer read the first records")
            assert group_type(bootstrap, "mixed") == "classic"

            new = PolledConsumer(bootstrap, "work", "mixed", "confluent-kafka", group_protocol="consumer",
                                 enable_auto_commit=True, auto_commit_interval_ms=200)
            wait_until(lambda: old.assignment and new.assignment and not (old.assignment & new.assignment)
                       and old.assignment | new.assignment == {0, 1, 2, 3}, WAIT_S,
                       "both members with partitions of their own")
            assert group_type(bootstrap, "mixed") == "consumer"
            assert member_types(bootstrap, "mixed") == [0, 1]  # hosted classic member, consumer member
            broker.restart()  # the mixed group, its classic member included, is in __consumer_offsets
            assert group_type(bootstrap, "mixed") == "consumer" and member_types(bootstrap, "mixed") == [0, 1]
            produce(bootstrap, "work", [f"b{i}" for i in range(40)], partitions=4)
            wait_until(lambda: sorted(v for v in old.values() + new.values() if v.startswith("b")) ==
                       sorted(f"b{i}" for i in range(40)), WAIT_S, "every new record read")
            both = [v for v in old.values() + new.values() if v.startswith("b")]
            assert len(both) == len(set(both)), "a record was read twice"

            new.close()
            new = None
            wait_until(lambda: group_type(bootstrap, "mixed") == "classic", WAIT_S, "the group classic again")
            wait_until(lambda: old.assignment == {0, 1, 2, 3}, WAIT_S, "the classic member has every partition")
            produce(bootstrap, "work", [f"c{i}" for i in range(8)], partitions=4)
            wait_until(lambda: sorted(v for v in old.values() if v.startswith("c")) == [f"c{i}" for i in range(8)],
                       WAIT_S, "the classic member reads on")
        finally:
            if new is not None:
                new.close()
            old.close()


def test_with_migration_disabled_a_consumer_protocol_member_cannot_join_a_classic_group(tmp_path):
    """group.consumer.migration.policy=disabled: GROUP_ID_NOT_FOUND, as Kafka answers."""
    with TrafkaBroker(data_dir=tmp_path / "data", config={**CONFIG, "group.consumer.migration.policy": "disabled"}) as broker:
        bootstrap = broker.bootstrap_servers
        create_topic(bootstrap, "work", 2)
        old = PolledConsumer(bootstrap, "work", "kept-apart", "kafka-python")
        try:
            wait_until(lambda: old.assignment == {0, 1}, WAIT_S, "the classic member has its partitions")
            with RawClient(bootstrap) as raw:
                answer = raw.request(68, 1, {"group_id": "kept-apart", "member_id": "m-1", "member_epoch": 0,
                                             "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000,
                                             "subscribed_topic_names": ["work"], "subscribed_topic_regex": None,
                                             "server_assignor": None, "topic_partitions": []})
            assert answer.error_code == 69  # GROUP_ID_NOT_FOUND
            assert group_type(bootstrap, "kept-apart") == "classic"
        finally:
            old.close()


def test_a_hosted_classic_member_that_does_not_rejoin_or_sync_in_time_is_removed(tmp_path):
    """Kafka's join and sync timeouts for classic members of a consumer group: told to rejoin, a
    member must send JoinGroup within its rebalance timeout; after JoinGroup, SyncGroup likewise.
    Broker time is moved with the test clock."""
    from trafka.broker.coordinators.group import formats
    from trafka.broker.coordinators.runtime.records import versioned

    subscription = versioned(formats.CONSUMER_PROTOCOL_SUBSCRIPTION, 1, {"topics": ["work"], "user_data": None,
                                                                         "owned_partitions": []})

    def join(raw, member_id: str):
        return raw.request(11, 5, {"group_id": "slow", "session_timeout_ms": 30000, "rebalance_timeout_ms": 5000,
                                   "member_id": member_id, "group_instance_id": None, "protocol_type": "consumer",
                                   "protocols": [{"name": "range", "metadata": subscription}]})

    def heartbeat(raw, member_id: str, generation: int) -> int:
        return raw.request(12, 3, {"group_id": "slow", "generation_id": generation, "member_id": member_id,
                                   "group_instance_id": None}).error_code

    def consumer_join(raw, member_id: str):
        return raw.request(68, 1, {"group_id": "slow", "member_id": member_id, "member_epoch": 0, "instance_id": None,
                                   "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["work"],
                                   "subscribed_topic_regex": None, "server_assignor": None, "topic_partitions": []})

    with TrafkaBroker(data_dir=tmp_path / "data", config={**CONFIG, "group.initial.rebalance.delay.ms": 0}) as broker:
        create_topic(broker.bootstrap_servers, "work", 2)
        with RawClient(broker.bootstrap_servers) as raw:
            member_id = join(raw, "").member_id
            first = join(raw, member_id)
            assert raw.request(14, 3, {"group_id": "slow", "generation_id": first.generation_id, "member_id": member_id,
                                       "group_instance_id": None, "assignments": [
                                           {"member_id": member_id, "assignment": formats.consumer_assignment(
                                               {"work": [0, 1]}, 1)}]}).error_code == 0
            assert consumer_join(raw, "modern-1").error_code == 0  # the group is a consumer group now
            assert heartbeat(raw, member_id, first.generation_id) == 27  # REBALANCE_IN_PROGRESS: rejoin
            broker.advance_clock(6000)  # past its rebalance timeout, within its session
            assert heartbeat(raw, member_id, first.generation_id) == 25  # UNKNOWN_MEMBER_ID: removed

            # A new classic member joins the consumer group and never sends SyncGroup.
            second = join(raw, "late-1")
            assert second.error_code == 0
            assert heartbeat(raw, "late-1", second.generation_id) in (0, 27)
            broker.advance_clock(6000)
            assert heartbeat(raw, "late-1", second.generation_id) == 25
