"""ACLs enforced on real clients: deny by default, allow by prefix, DENY over ALLOW, super users,
the User:* principal, host-restricted ACLs, Metadata hiding topics, consumer-group and
transactional-id ACLs, allow.everyone.if.no.acl.found."""

from __future__ import annotations

import pytest
from testkit.acl_clients import CONSUMERS, PRODUCERS, consume_confluent, produce_confluent, produce_kafka_python
from testkit.acl import acl_broker, allow, confluent_admin, login, unique
from testkit.security import Auth, confluent_config


def _sasl(broker) -> str:
    return broker.bootstrap("SASL_PLAINTEXT")


def _create_topic(broker, name: str, partitions: int = 1) -> None:
    from confluent_kafka.admin import NewTopic

    admin = confluent_admin(broker)  # kept alive until the futures are done
    for future in admin.create_topics([NewTopic(name, partitions)]).values():
        future.result(30)


def _listed_topics(broker, user: str) -> set[str]:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": _sasl(broker), **confluent_config(login(user))})
    return set(admin.list_topics(timeout=30).topics)


@pytest.mark.parametrize("client", sorted(PRODUCERS))
def test_denied_by_default_then_allowed_by_prefix(broker, client):
    prefix = unique(f"{client}-")
    topic, group = prefix + "orders", prefix + "group"
    _create_topic(broker, topic)
    assert PRODUCERS[client](_sasl(broker), login("alice"), topic, b"refused") == "TOPIC_AUTHORIZATION_FAILED"

    admin = confluent_admin(broker)
    allow(admin, "User:alice", "TOPIC", prefix, "WRITE", pattern="PREFIXED")
    allow(admin, "User:alice", "TOPIC", prefix, "READ", pattern="PREFIXED")
    assert PRODUCERS[client](_sasl(broker), login("alice"), topic, b"allowed") is None
    # Reading needs the group too: without it the group is refused, with it the record comes back.
    assert CONSUMERS[client](_sasl(broker), login("alice"), topic, group) == "GROUP_AUTHORIZATION_FAILED"
    allow(admin, "User:alice", "GROUP", prefix, "READ", pattern="PREFIXED")
    assert CONSUMERS[client](_sasl(broker), login("alice"), topic, group) == b"allowed"


def test_deny_overrides_allow_and_the_wildcard_principal(broker):
    topic = unique("shared")
    _create_topic(broker, topic)
    admin = confluent_admin(broker)
    allow(admin, "User:*", "TOPIC", topic, "ALL")
    allow(admin, "User:*", "GROUP", topic, "READ", pattern="PREFIXED")
    allow(admin, "User:bob", "TOPIC", topic, "WRITE", permission="DENY")
    assert produce_confluent(_sasl(broker), login("alice"), topic, b"from-alice") is None
    assert produce_confluent(_sasl(broker), login("bob"), topic, b"from-bob") == "TOPIC_AUTHORIZATION_FAILED"
    # DENY WRITE does not deny READ: bob still reads what alice wrote.
    assert consume_confluent(_sasl(broker), login("bob"), topic, topic + "-bob") == b"from-alice"


def test_super_user_needs_no_acls(broker):
    topic = unique("admin-only")
    assert produce_kafka_python(_sasl(broker), login("admin"), topic, b"x") is None  # auto-created, too
    assert topic in _listed_topics(broker, "admin")


def test_metadata_hides_the_topics_a_principal_may_not_describe(broker):
    visible, hidden = unique("visible"), unique("hidden")
    _create_topic(broker, visible)
    _create_topic(broker, hidden)
    allow(confluent_admin(broker), "User:bob", "TOPIC", visible, "READ")  # READ implies DESCRIBE
    listed = _listed_topics(broker, "bob")
    assert visible in listed and hidden not in listed
    assert {visible, hidden} <= _listed_topics(broker, "admin")


def test_auto_creation_needs_create(broker):
    topic = unique("auto")
    admin = confluent_admin(broker)
    allow(admin, "User:alice", "TOPIC", topic, "WRITE")
    assert produce_kafka_python(_sasl(broker), login("alice"), topic, b"x") == "TOPIC_AUTHORIZATION_FAILED"
    assert topic not in _listed_topics(broker, "admin")
    allow(admin, "User:alice", "TOPIC", topic, "CREATE")
    assert produce_kafka_python(_sasl(broker), login("alice"), topic, b"x") is None


def test_host_restricted_acl(broker):
    topic = unique("hosts")
    _create_topic(broker, topic)
    admin = confluent_admin(broker)
    allow(admin, "User:bob", "TOPIC", topic, "WRITE", host="10.1.2.3")
    assert produce_confluent(_sasl(broker), login("bob"), topic, b"x") == "TOPIC_AUTHORIZATION_FAILED"
    allow(admin, "User:bob", "TOPIC", topic, "WRITE", host="127.0.0.1")
    assert produce_confluent(_sasl(broker), login("bob"), topic, b"x") is None
    # A CIDR range (KIP-1276): a DENY for 127.0.0.0/8 now wins over the ALLOW for 127.0.0.1.
    allow(admin, "User:bob", "TOPIC", topic, "WRITE", host="127.0.0.0/8", permission="DENY")
    assert produce_confluent(_sasl(broker), login("bob"), topic, b"x") == "TOPIC_AUTHORIZATION_FAILED"


def test_plaintext_clients_are_user_anonymous(broker):
    topic = unique("anon")
    _create_topic(broker, topic)
    anonymous = Auth("PLAINTEXT")
    assert produce_confluent(broker.bootstrap("PLAINTEXT"), anonymous, topic, b"x") == "TOPIC_AUTHORIZATION_FAILED"
    allow(confluent_admin(broker), "User:ANONYMOUS", "TOPIC", topic, "WRITE")
    assert produce_confluent(broker.bootstrap("PLAINTEXT"), anonymous, topic, b"x") is None


def test_transactional_producer_needs_its_transactional_id(broker):
    from confluent_kafka import KafkaException, Producer

    prefix = unique("txn")
    topic = prefix + "-out"
    _create_topic(broker, topic)
    admin = confluent_admin(broker)
    allow(admin, "User:alice", "TOPIC", prefix, "WRITE", pattern="PREFIXED")
    config = {"bootstrap.servers": _sasl(broker), "transactional.id": prefix + "-id", **confluent_config(login("alice"))}
    producer = Producer(config)
    with pytest.raises(KafkaException) as info:
        producer.init_transactions(30)
    assert info.value.args[0].name() == "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"

    allow(admin, "User:alice", "TRANSACTIONAL_ID", prefix, "WRITE", pattern="PREFIXED")
    producer = Producer(config)
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"in-a-transaction")
    producer.commit_transaction(30)
    allow(admin, "User:alice", "GROUP", prefix, "READ", pattern="PREFIXED")
    allow(admin, "User:alice", "TOPIC", prefix, "READ", pattern="PREFIXED")
    assert consume_confluent(_sasl(broker), login("alice"), topic, prefix + "-g") == b"in-a-transaction"


def test_allow_everyone_if_no_acl_found(tmp_path):
    broker = acl_broker(tmp_path / "data", **{"allow.everyone.if.no.acl.found": "true"})
    broker.start()
    try:
        open_topic, guarded = unique("open"), unique("guarded")
        _create_topic(broker, open_topic)
        _create_topic(broker, guarded)
        allow(confluent_admin(broker), "User:alice", "TOPIC", guarded, "WRITE")
        assert produce_confluent(_sasl(broker), login("bob"), open_topic, b"x") is None
        assert produce_confluent(_sasl(broker), login("bob"), guarded, b"x") == "TOPIC_AUTHORIZATION_FAILED"
        assert produce_confluent(_sasl(broker), login("alice"), guarded, b"x") is None
    finally:
        broker.stop()


def test_transactional_offsets_need_read_on_the_group(broker):
    """kafka-python's send_offsets_to_transaction: AddOffsetsToTxn and TxnOffsetCommit need READ
    on the group (GROUP_AUTHORIZATION_FAILED before), then the offsets commit with the transaction."""
    from kafka import KafkaProducer, TopicPartition
    from kafka.errors import GroupAuthorizationFailedError
    from kafka.structs import OffsetAndMetadata
    from testkit.security import kafka_python_config

    prefix = unique("ctp")
    topic = prefix + "-in"
    _create_topic(broker, topic)
    admin = confluent_admin(broker)
    for resource, operation in (("TOPIC", "WRITE"), ("TOPIC", "READ"), ("TRANSACTIONAL_ID", "WRITE")):
        allow(admin, "User:alice", resource, prefix, operation, pattern="PREFIXED")
    offsets = {TopicPartition(topic, 0): OffsetAndMetadata(1, "", -1)}
    producer = KafkaProducer(bootstrap_servers=_sasl(broker), transactional_id=prefix + "-id",
                             **kafka_python_config(login("alice")))
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, b"x").get(30)
        with pytest.raises(GroupAuthorizationFailedError):
            producer.send_offsets_to_transaction(offsets, prefix + "-group")
        producer.abort_transaction()

        allow(admin, "User:alice", "GROUP", prefix, "READ", pattern="PREFIXED")
        producer.begin_transaction()
        producer.send(topic, b"y").get(30)
        producer.send_offsets_to_transaction(offsets, prefix + "-group")
        producer.commit_transaction()
    finally:
        producer.close(timeout=5)
    committed = admin.list_consumer_group_offsets([_group_request(prefix + "-group", topic)])
    [future] = committed.values()
    assert [(p.topic, p.offset) for p in future.result(30).topic_partitions] == [(topic, 1)]


def _group_request(group: str, topic: str):
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    return ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0)])


def test_committing_offsets_needs_read_on_each_topic(broker):
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    prefix = unique("commit")
    readable, unreadable, group = prefix + "-ok", prefix + "-no", prefix + "-g"
    _create_topic(broker, readable)
    _create_topic(broker, unreadable)
    admin = confluent_admin(broker)
    allow(admin, "User:bob", "GROUP", group, "READ")
    allow(admin, "User:bob", "TOPIC", readable, "READ")
    consumer = Consumer({"bootstrap.servers": _sasl(broker), "group.id": group, **confluent_config(login("bob"))})
    try:
        [done] = consumer.commit(offsets=[TopicPartition(readable, 0, 3)], asynchronous=False)
        assert done.error is None
        with pytest.raises(KafkaException) as info:
            consumer.commit(offsets=[TopicPartition(unreadable, 0, 3)], asynchronous=False)
        assert "TOPIC_AUTHORIZATION_FAILED" in str(info.value) or "Topic authorization failed" in str(info.value)
        [fetched] = consumer.committed([TopicPartition(readable, 0)], timeout=30)
        assert fetched.offset == 3
    finally:
        consumer.close()


@pytest.mark.parametrize("client", sorted(CONSUMERS))
def test_consumer_without_read_on_the_topic(broker, client):
    """bob may see the topic (DESCRIBE) and use the group, but not read: Fetch is refused."""
    topic, group = unique(f"{client}-unreadable"), unique(f"{client}-g")
    _create_topic(broker, topic)
    admin = confluent_admin(broker)
    allow(admin, "User:bob", "GROUP", group, "READ")
    allow(admin, "User:bob", "TOPIC", topic, "DESCRIBE")
    assert CONSUMERS[client](_sasl(broker), login("bob"), topic, group) == "TOPIC_AUTHORIZATION_FAILED"
