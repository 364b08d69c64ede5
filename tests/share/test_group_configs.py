"""Group configs (GROUP config resources, type 32) with confluent-kafka's AdminClient and the
Java 4.3 Admin: the first step of a share consumer setup (share.auto.offset.reset=earliest),
consumer-group configs, validation against the broker's bounds, durability."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from testkit.groups import create_topic
from tests.share.test_share_consumers import poll_until, produce, share_consumer
from trafka.testing.rawwire import RawClient


def alter(admin: AdminClient, group: str, **values) -> None:
    entries = [ConfigEntry(name.replace("_", "."), str(v), incremental_operation=AlterConfigOpType.SET)
               for name, v in values.items()]
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    admin.incremental_alter_configs([resource])[resource].result(10)


def described(admin: AdminClient, group: str) -> dict[str, tuple[str, str]]:
    resource = ConfigResource(ResourceType.GROUP, group)
    configs = admin.describe_configs([resource])[resource].result(10)
    return {name: (entry.value, entry.source.name if hasattr(entry.source, "name") else str(entry.source))
            for name, entry in configs.items()}


def test_share_auto_offset_reset_earliest_reads_what_was_there_before(broker):
    create_topic(broker.bootstrap_servers, "history", 1)
    produce(broker, "history", [b"old-0", b"old-1"])
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    alter(admin, "replayers", share_auto_offset_reset="earliest")
    consumer = share_consumer(broker, "replayers", explicit=True)
    consumer.subscribe(["history"])
    got = poll_until(consumer, 2)
    assert [(m.offset(), m.value()) for m in got] == [(0, b"old-0"), (1, b"old-1")]
    for message in got:
        consumer.acknowledge(message)
    consumer.commit_sync(10)
    consumer.close()


def test_group_configs_are_validated_described_and_kept_across_a_restart(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    alter(admin, "g", consumer_session_timeout_ms=50000, share_isolation_level="read_committed")
    configs = described(admin, "g")
    assert configs["consumer.session.timeout.ms"][0] == "50000"
    assert configs["share.isolation.level"][0] == "read_committed"
    assert configs["share.auto.offset.reset"][0] == "latest"
    assert configs["consumer.heartbeat.interval.ms"][0] == "5000"
    for bad in ({"consumer_session_timeout_ms": 1000},  # below group.consumer.min.session.timeout.ms
                {"share_auto_offset_reset": "sometimes"}, {"share_isolation_level": "dirty"}, {"no_such_config": 1}):
        with pytest.raises(KafkaException, match="INVALID_CONFIG|must be|Invalid value|Unknown group config"):
            alter(admin, "g", **bad)
    with RawClient(broker.bootstrap_servers) as raw:
        listed = raw.request(74, 1, {"resource_types": [32]}).config_resources
        assert [(r.resource_name, r.resource_type) for r in listed] == [("g", 32)]
    broker.restart()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    configs = described(admin, "g")
    assert configs["consumer.session.timeout.ms"][0] == "50000"
    assert configs["share.isolation.level"][0] == "read_committed"


def test_a_consumer_groups_heartbeat_interval_comes_from_its_group_config(broker):
    """consumer.heartbeat.interval.ms set on the group is what ConsumerGroupHeartbeat tells its
    members; another group keeps the broker's."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    alter(admin, "tuned", consumer_heartbeat_interval_ms=7000)
    create_topic(broker.bootstrap_servers, "t", 1)
    with RawClient(broker.bootstrap_servers) as raw:
        def join(group):
            return raw.request(68, 1, {
                "group_id": group, "member_id": "m-" + group, "member_epoch": 0, "instance_id": None, "rack_id": None,
                "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"], "subscribed_topic_regex": None,
                "server_assignor": None, "topic_partitions": []})
        assert join("tuned").heartbeat_interval_ms == 7000
        assert join("plain").heartbeat_interval_ms == 5000


def test_share_isolation_read_committed_never_hands_out_aborted_or_open_records(broker):
    """share.isolation.level=read_committed: records of an aborted transaction are never
    acquired, those of an open one not before it commits; the markers are skipped."""
    from confluent_kafka import Producer

    create_topic(broker.bootstrap_servers, "ledger", 1)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    alter(admin, "auditors", share_auto_offset_reset="earliest", share_isolation_level="read_committed")
    txn = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "ledger-writer"})
    txn.init_transactions(10)
    txn.begin_transaction()
    txn.produce("ledger", b"committed-1", partition=0)
    txn.commit_transaction(10)
    txn.begin_transaction()
    txn.produce("ledger", b"aborted", partition=0)
    txn.abort_transaction(10)
    txn.begin_transaction()
    txn.produce("ledger", b"committed-2", partition=0)
    txn.flush(10)  # written, transaction still open

    consumer = share_consumer(broker, "auditors", explicit=True)
    consumer.subscribe(["ledger"])
    first = poll_until(consumer, 1)
    assert [m.value() for m in first] == [b"committed-1"]
    for message in first:
        consumer.acknowledge(message)
    consumer.commit_sync(10)
    assert poll_until(consumer, 1, timeout=2) == []  # the open transaction's record waits
    txn.commit_transaction(10)
    second = poll_until(consumer, 1)
    assert [m.value() for m in second] == [b"committed-2"]
    consumer.acknowledge(second[0])
    consumer.commit_sync(10)
    consumer.close()
