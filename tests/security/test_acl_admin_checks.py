"""The admin side of ACLs through confluent-kafka's AdminClient: topic creation and deletion,
configs on topics and the broker, consumer groups (listing filtered, describing with authorized
operations, deleting), DescribeCluster's and DescribeTopics' authorized operations, SCRAM
admin, and an idempotent producer's InitProducerId."""

from __future__ import annotations

import pytest
from testkit.acl import allow, confluent_admin, login, unique
from testkit.acl_clients import consume_confluent, produce_confluent
from testkit.security import confluent_config


def _error_name(future) -> str | None:
    from confluent_kafka import KafkaException

    try:
        future.result(30)
        return None
    except KafkaException as exc:
        return exc.args[0].name()


def _create_topic(admin, name: str):
    from confluent_kafka.admin import NewTopic

    [future] = admin.create_topics([NewTopic(name, 1)]).values()
    return future


def test_create_and_delete_topics_need_create_and_delete(broker):
    admin, alice = confluent_admin(broker), confluent_admin(broker, "alice")
    prefix = unique("admin-topics")
    assert _error_name(_create_topic(alice, prefix + "-a")) == "TOPIC_AUTHORIZATION_FAILED"
    allow(admin, "User:alice", "TOPIC", prefix, "CREATE", pattern="PREFIXED")
    assert _error_name(_create_topic(alice, prefix + "-a")) is None
    [future] = alice.delete_topics([prefix + "-a"]).values()
    assert _error_name(future) == "TOPIC_AUTHORIZATION_FAILED"
    [future] = alice.delete_topics([unique("no-such-topic")]).values()  # existence is not told either
    assert _error_name(future) == "TOPIC_AUTHORIZATION_FAILED"
    allow(admin, "User:alice", "TOPIC", prefix, "DELETE", pattern="PREFIXED")
    [future] = alice.delete_topics([prefix + "-a"]).values()
    assert _error_name(future) is None


def test_configs_need_describe_configs_on_the_topic_or_cluster(broker):
    from confluent_kafka.admin import ConfigResource, ResourceType

    admin, alice = confluent_admin(broker), confluent_admin(broker, "alice")
    topic = unique("configs")
    assert _error_name(_create_topic(admin, topic)) is None
    topic_resource, broker_resource = ConfigResource(ResourceType.TOPIC, topic), ConfigResource(ResourceType.BROKER, "0")
    results = alice.describe_configs([topic_resource, broker_resource])
    assert _error_name(results[topic_resource]) == "TOPIC_AUTHORIZATION_FAILED"
    assert _error_name(results[broker_resource]) == "CLUSTER_AUTHORIZATION_FAILED"
    allow(admin, "User:alice", "TOPIC", topic, "ALTER_CONFIGS")  # implies DESCRIBE_CONFIGS
    configs = alice.describe_configs([topic_resource])[topic_resource].result(30)
    assert "retention.ms" in configs
    [future] = alice.incremental_alter_configs([ConfigResource(
        ResourceType.TOPIC, topic, incremental_configs=[_set("retention.ms", "60000")])]).values()
    assert _error_name(future) is None


def _set(name: str, value: str):
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry

    return ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)


def test_consumer_groups_are_listed_described_and_deleted_per_acl(broker):
    from confluent_kafka import ConsumerGroupState  # noqa: F401  (the admin API's types load with it)
    from confluent_kafka.admin import AclOperation

    admin, bob = confluent_admin(broker), confluent_admin(broker, "bob")
    prefix = unique("groups")
    topic, mine, theirs = prefix + "-t", prefix + "-mine", prefix + "-theirs"
    assert _error_name(_create_topic(admin, topic)) is None
    assert produce_confluent(broker.bootstrap("SASL_PLAINTEXT"), login("admin"), topic, b"x") is None
    for group in (mine, theirs):  # the super user makes both groups exist, with committed offsets
        assert consume_confluent(broker.bootstrap("SASL_PLAINTEXT"), login("admin"), topic, group) == b"x"
    allow(admin, "User:bob", "GROUP", mine, "READ")

    listed = {g.group_id for g in bob.list_consumer_groups().result(30).valid}
    assert mine in listed and theirs not in listed
    described = bob.describe_consumer_groups([mine, theirs], include_authorized_operations=True)
    assert {op for op in described[mine].result(30).authorized_operations} == {AclOperation.READ, AclOperation.DESCRIBE}
    assert _error_name(described[theirs]) == "GROUP_AUTHORIZATION_FAILED"
    assert _error_name(bob.delete_consumer_groups([mine])[mine]) == "GROUP_AUTHORIZATION_FAILED"
    allow(admin, "User:bob", "GROUP", mine, "DELETE")
    assert _error_name(bob.delete_consumer_groups([mine])[mine]) is None


def test_authorized_operations_of_the_cluster_and_a_topic(broker):
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import AclOperation

    admin, alice = confluent_admin(broker), confluent_admin(broker, "alice")
    topic = unique("ops")
    assert _error_name(_create_topic(admin, topic)) is None
    allow(admin, "User:alice", "TOPIC", topic, "READ")
    allow(admin, "User:alice", "CLUSTER", "kafka-cluster", "DESCRIBE_CONFIGS")
    # Without DESCRIBE on the cluster, Kafka tells nothing of the cluster operations.
    assert not alice.describe_cluster(include_authorized_operations=True).result(30).authorized_operations
    allow(admin, "User:alice", "CLUSTER", "kafka-cluster", "DESCRIBE")
    cluster = alice.describe_cluster(include_authorized_operations=True).result(30)
    assert set(cluster.authorized_operations) == {AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS}
    assert AclOperation.ALTER in admin.describe_cluster(include_authorized_operations=True).result(30).authorized_operations
    [future] = alice.describe_topics(TopicCollection([topic]), include_authorized_operations=True).values()
    assert set(future.result(30).authorized_operations) == {AclOperation.READ, AclOperation.DESCRIBE}


def test_scram_admin_needs_the_cluster(broker):
    from confluent_kafka.admin import AdminClient

    carol = unique("carol")  # a principal with no ACLs at all
    admin = AdminClient({"bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"), **confluent_config(login("bob"))})
    [future] = admin.describe_user_scram_credentials([carol]).values()
    assert _error_name(future) == "CLUSTER_AUTHORIZATION_FAILED"


def test_idempotent_producer_needs_write_on_some_topic(broker):
    from confluent_kafka import Producer

    topic = unique("idem")
    admin = confluent_admin(broker)
    assert _error_name(_create_topic(admin, topic)) is None
    config = {"bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"), "enable.idempotence": True,
              "message.timeout.ms": 10000, **confluent_config(login("bob"))}
    errors = []
    producer = Producer(config)
    producer.produce(topic, b"refused", on_delivery=lambda err, msg: errors.append(err))
    producer.flush(30)
    assert errors and errors[0] is not None and "AUTHORIZATION_FAILED" in errors[0].name()
    allow(admin, "User:bob", "TOPIC", topic, "WRITE")
    errors = []
    producer = Producer(config)
    producer.produce(topic, b"allowed", on_delivery=lambda err, msg: errors.append(err))
    producer.flush(30)
    assert len(errors) == 1 and errors[0] is None
