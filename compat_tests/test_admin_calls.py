"""Admin client calls of Java kafka-clients 4.3.0, confluent-kafka and kafka-python that the
other compat modules leave out, each against the session broker: describing topics, list-typed
topic configs subtracted down to nothing, the broker's configs as a Kafka 4 node reports them,
group administration, and the calls a one-node Kafka 4.1 broker refuses."""

from __future__ import annotations

import uuid

import pytest

from compat_tests.conftest import make_topic
from testkit.java import KafkaJavaError, _jiter, java_list, share_reset_earliest
from testkit.java import share_consumer as java_share_consumer


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


@pytest.mark.compat("admin-describe-topics")
@pytest.mark.compat_client("confluent-kafka")
def test_confluent_describe_topics(bootstrap):
    from confluent_kafka import KafkaException, TopicCollection
    from confluent_kafka.admin import AdminClient

    topic = make_topic(bootstrap, _unique("describe-ck"), partitions=3)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    (future,) = admin.describe_topics(TopicCollection([topic])).values()
    described = future.result(timeout=30)
    assert (described.name, described.is_internal) == (topic, False)
    assert [(p.id, p.leader.id, [r.id for r in p.replicas], [r.id for r in p.isr]) for p in described.partitions] == [
        (0, 0, [0], [0]), (1, 0, [0], [0]), (2, 0, [0], [0])]
    (missing,) = admin.describe_topics(TopicCollection([_unique("describe-ck-none")])).values()
    with pytest.raises(KafkaException, match="UNKNOWN_TOPIC_OR_PART"):
        missing.result(timeout=30)


@pytest.mark.compat("admin-describe-topics")
@pytest.mark.compat_client("kafka-python")
def test_kafka_python_describe_topic_partitions_with_the_cursor(bootstrap):
    from kafka import KafkaAdminClient

    topic = make_topic(bootstrap, _unique("describe-kp"), partitions=3)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        first = admin.describe_topic_partitions([topic], response_partition_limit=2)
        rest = admin.describe_topic_partitions([topic], response_partition_limit=2, cursor=first["next_cursor"])
    finally:
        admin.close()
    ((name, error, parts),) = [(t["name"], t["error_code"], t["partitions"]) for t in first["topics"]]
    assert (name, error) == (topic, 0)
    assert [(p["partition_index"], p["leader_id"], p["replica_nodes"]) for p in parts] == [(0, 0, [0]), (1, 0, [0])]
    assert first["next_cursor"] == {"topic_name": topic, "partition_index": 2}
    assert [p["partition_index"] for p in rest["topics"][0]["partitions"]] == [2]
    assert rest["next_cursor"] is None


def _broker_configs_are_a_kafka4_nodes(configs: dict, bootstrap: str, data_dir) -> None:
    endpoint = f"PLAINTEXT://{bootstrap}"
    assert configs["advertised.listeners"] == endpoint
    assert configs["listeners"] == endpoint
    assert configs["process.roles"] == "broker,controller"
    assert configs["node.id"] == "0"
    assert configs["log.dirs"] == str(data_dir.resolve())


@pytest.mark.compat("admin-configs")
@pytest.mark.compat_client("java-4.3.0")
def test_java_subtracts_a_list_config_to_nothing_and_reads_broker_configs(java_client_43, bootstrap,
                                                                           trafka_session_broker):
    """Kafka accepts cleanup.policy SUBTRACTed down to an empty list (KIP-1161)."""
    topic = make_topic(bootstrap, _unique("subtract-java"), configs={"cleanup.policy": "compact,delete"})
    admin = java_client_43.make_admin({"bootstrap.servers": bootstrap})
    jvm, call = java_client_43.jvm, java_client_43.call
    clients_admin = jvm.org.apache.kafka.clients.admin
    resource = jvm.org.apache.kafka.common.config.ConfigResource(
        jvm.org.apache.kafka.common.config.ConfigResource.Type.TOPIC, topic)
    ops = jvm.java.util.ArrayList()
    ops.add(clients_admin.AlterConfigOp(clients_admin.ConfigEntry("cleanup.policy", "compact,delete"),
                                        clients_admin.AlterConfigOp.OpType.SUBTRACT))
    changes = jvm.java.util.HashMap()
    changes.put(resource, ops)
    assert call(call(call(admin.j.incrementalAlterConfigs, changes).all).get) is None
    assert admin.describeConfigs(topic)["cleanup.policy"] == ""
    _broker_configs_are_a_kafka4_nodes(admin.describeConfigs("0", "broker"), bootstrap, trafka_session_broker.data_dir)


@pytest.mark.compat("admin-configs")
@pytest.mark.compat_client("confluent-kafka")
def test_confluent_subtracts_a_list_config_to_nothing_and_reads_broker_configs(bootstrap, trafka_session_broker):
    from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,
                                       ResourceType)

    topic = make_topic(bootstrap, _unique("subtract-ck"), configs={"cleanup.policy": "delete"})
    admin = AdminClient({"bootstrap.servers": bootstrap})
    entry = ConfigEntry("cleanup.policy", "delete", incremental_operation=AlterConfigOpType.SUBTRACT)
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[entry])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=30)
    (described,) = admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic)]).values()
    assert described.result(timeout=30)["cleanup.policy"].value == ""
    (broker,) = admin.describe_configs([ConfigResource(ResourceType.BROKER, "0")]).values()
    configs = {name: entry.value for name, entry in broker.result(timeout=30).items()}
    _broker_configs_are_a_kafka4_nodes(configs, bootstrap, trafka_session_broker.data_dir)


def _java_error(call) -> str:
    with pytest.raises(KafkaJavaError) as caught:
        call()
    return caught.value.simple_name


@pytest.mark.compat("group")
@pytest.mark.compat_client("java-4.3.0")
def test_java_classic_group_administration(java_client_43, bootstrap):
    """listConsumerGroups, describeClassicGroups, alter/delete committed offsets,
    removeMembersFromConsumerGroup naming a static member, deleteConsumerGroups."""
    from trafka.testing.waiting import wait_until

    k = java_client_43
    jvm, call = k.jvm, k.call
    clients_admin = jvm.org.apache.kafka.clients.admin
    topic = make_topic(bootstrap, _unique("admin-groups-java"), partitions=2)
    group, instance = _unique("static-group"), "static-1"
    consumer = k.make_consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.instance.id": instance,
                                "enable.auto.commit": "false", "session.timeout.ms": "45000"})
    consumer.subscribe([topic])
    wait_until(lambda: consumer.poll(100) is not None and len(consumer.assignment()) == 2, 60, "two partitions")
    consumer.commitSync({(topic, 0): 1, (topic, 1): 2})
    consumer.close()  # a static member does not leave on close: it stays until removed or timed out
    admin = k.make_admin({"bootstrap.servers": bootstrap})

    listed = {g.groupId(): g for g in _jiter(call(call(call(admin.j.listConsumerGroups).all).get))}
    assert listed[group].type().get().toString() == "Classic"
    (classic,) = call(call(call(admin.j.describeClassicGroups, java_list(jvm, group)).all).get).values()
    assert (classic.state().toString(), classic.protocol(), classic.protocolData()) == ("Stable", "consumer", "range")
    assert [m.groupInstanceId().get() for m in _jiter(classic.members())] == [instance]

    # Offsets of a group with a member: altering is refused as on Kafka, deleting a subscribed
    # topic's offsets too.
    offsets = jvm.java.util.HashMap()
    offsets.put(k.tp(topic, 0), jvm.org.apache.kafka.clients.consumer.OffsetAndMetadata(7))
    assert _java_error(lambda: call(call(call(admin.j.alterConsumerGroupOffsets, group, offsets).all).get)) == \
        "UnknownMemberIdException"
    parts = jvm.java.util.HashSet()
    parts.add(k.tp(topic, 0))
    assert _java_error(lambda: call(call(call(admin.j.deleteConsumerGroupOffsets, group, parts).all).get)) == \
        "GroupSubscribedToTopicException"

    members = java_list(jvm, clients_admin.MemberToRemove(instance))
    options = clients_admin.RemoveMembersFromConsumerGroupOptions(members)
    assert call(call(call(admin.j.removeMembersFromConsumerGroup, group, options).all).get) is None
    (classic,) = call(call(call(admin.j.describeClassicGroups, java_list(jvm, group)).all).get).values()
    assert (classic.state().toString(), classic.members().size()) == ("Empty", 0)

    # An empty group's offsets change and go.
    assert call(call(call(admin.j.alterConsumerGroupOffsets, group, offsets).all).get) is None
    assert call(call(call(admin.j.deleteConsumerGroupOffsets, group, parts).all).get) is None
    assert admin.listConsumerGroupOffsets(group) == {(topic, 1): 2}
    assert call(call(call(admin.j.deleteConsumerGroups, java_list(jvm, group)).all).get) is None
    assert group not in {g.groupId() for g in _jiter(call(call(call(admin.j.listConsumerGroups).all).get))}


@pytest.mark.compat("admin-log-dirs")
@pytest.mark.compat_client("java-4.3.0")
def test_java_describe_replica_log_dirs(java_client_43, bootstrap, trafka_session_broker):
    k = java_client_43
    jvm, call = k.jvm, k.call
    topic = make_topic(bootstrap, _unique("replica-dirs-java"), partitions=1)
    here = jvm.org.apache.kafka.common.TopicPartitionReplica(topic, 0, 0)
    admin = k.make_admin({"bootstrap.servers": bootstrap})
    described = call(call(call(admin.j.describeReplicaLogDirs, java_list(jvm, here)).all).get)
    info = described.get(here)
    assert info.getCurrentReplicaLogDir() == str(trafka_session_broker.data_dir.resolve())
    assert info.getFutureReplicaLogDir() is None  # no move in progress


@pytest.mark.compat_client("java-4.3.0")
def test_java_scram_credentials_and_client_metrics_resources(java_client_43, bootstrap):
    k = java_client_43
    jvm, call = k.jvm, k.call
    clients_admin = jvm.org.apache.kafka.clients.admin
    user = _unique("scram-user")
    admin = k.make_admin({"bootstrap.servers": bootstrap})
    upsert = clients_admin.UserScramCredentialUpsertion(
        user, clients_admin.ScramCredentialInfo(clients_admin.ScramMechanism.SCRAM_SHA_256, 8192), "secret")
    assert call(call(call(admin.j.alterUserScramCredentials, java_list(jvm, upsert)).all).get) is None
    described = call(call(call(admin.j.describeUserScramCredentials, java_list(jvm, user)).all).get)
    (info,) = _jiter(described.get(user).credentialInfos())
    assert (info.mechanism().toString(), info.iterations()) == ("SCRAM_SHA_256", 8192)
    deletion = clients_admin.UserScramCredentialDeletion(user, clients_admin.ScramMechanism.SCRAM_SHA_256)
    assert call(call(call(admin.j.alterUserScramCredentials, java_list(jvm, deletion)).all).get) is None
    # The user is gone: RESOURCE_NOT_FOUND, which all() shows as no credentials and
    # description(user) as the exception.
    gone = call(admin.j.describeUserScramCredentials, java_list(jvm, user))
    assert call(call(gone.all).get).get(user).credentialInfos().isEmpty()
    assert _java_error(lambda: call(call(gone.description, user).get)) == "ResourceNotFoundException"
    # ListConfigResources with the client-metrics type: no subscriptions are kept here.
    assert call(call(call(admin.j.listClientMetricsResources).all).get).isEmpty()


@pytest.mark.compat_client("java-4.3.0")
def test_java_calls_trafka_does_not_serve_get_unsupported_version(java_client_43, bootstrap):
    """Streams groups (KIP-1071: a broker without the feature), UnregisterBroker and the KRaft
    voter changes are not served: the Java admin client
    sees they are not advertised and fails each call with UnsupportedVersionException, no request
    sent."""
    k = java_client_43
    jvm, call = k.jvm, k.call
    admin = k.make_admin({"bootstrap.servers": bootstrap})
    uuid_ = jvm.org.apache.kafka.common.Uuid.randomUuid()
    calls = {
        "describeStreamsGroups": lambda: call(call(call(admin.j.describeStreamsGroups, java_list(jvm, "sg")).all).get),
        "unregisterBroker": lambda: call(call(call(admin.j.unregisterBroker, 0).all).get),
        "addRaftVoter": lambda: call(call(call(admin.j.addRaftVoter, 1, uuid_, jvm.java.util.HashSet()).all).get),
        "removeRaftVoter": lambda: call(call(call(admin.j.removeRaftVoter, 1, uuid_).all).get),
    }
    assert {name: _java_error(fn) for name, fn in calls.items()} == {name: "UnsupportedVersionException" for name in calls}


@pytest.mark.compat_client("java-4.3.0")
def test_java_describes_a_share_group_of_a_confluent_share_consumer(java_client_43, bootstrap):
    """Admin.describeShareGroups (ShareGroupDescribe, key 77) of a group a confluent-kafka
    ShareConsumer is a member of: its state, member and assigned partitions by name."""
    import time

    from confluent_kafka import ShareConsumer

    from testkit.groups import create_topic

    create_topic(bootstrap, "shared-jobs", 2)
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": "java-described", "client.id": "sharer"})
    consumer.subscribe(["shared-jobs"])
    k = java_client_43
    jvm, call = k.jvm, k.call
    admin = k.make_admin({"bootstrap.servers": bootstrap})
    try:
        end = time.monotonic() + 30
        while True:
            consumer.poll(0.2)
            described = call(call(call(admin.j.describeShareGroups, java_list(jvm, "java-described")).all).get)
            group = described.get("java-described")
            members = list(call(group.members).toArray())
            if members and not call(call(members[0].assignment).topicPartitions).isEmpty() or time.monotonic() > end:
                break
        assert str(call(group.groupState)) == "Stable"
        [member] = members
        assert call(member.clientId) == "sharer"
        assigned = sorted((call(tp.topic), call(tp.partition)) for tp in call(call(member.assignment).topicPartitions).toArray())
        assert assigned == [("shared-jobs", 0), ("shared-jobs", 1)]
    finally:
        consumer.close()


def _consumer_protocol_member(bootstrap: str, group: str, topic: str, partitions: int, instance_id=None):
    """A confluent-kafka consumer in a KIP-848 group, polled until it owns every partition."""
    from confluent_kafka import Consumer

    from trafka.testing.waiting import wait_until

    config = {"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
              "enable.auto.commit": False, "auto.offset.reset": "earliest"}
    if instance_id:
        config = {**config, "group.protocol": "classic", "group.instance.id": instance_id}
    consumer = Consumer(config)
    consumer.subscribe([topic])

    def owns_all():
        consumer.poll(0.1)
        return len(consumer.assignment()) == partitions

    wait_until(owns_all, 60, f"{group}'s member owns {topic}")
    return consumer


@pytest.mark.compat("group")
@pytest.mark.compat_client("confluent-kafka")
def test_confluent_offsets_admin_on_a_consumer_protocol_group(bootstrap):
    """alter/list/delete group offsets on a KIP-848 group: refused while it has a member
    (UNKNOWN_MEMBER_ID, as Kafka's admin commits are), accepted once it is empty."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    topic = make_topic(bootstrap, _unique("ck-group-offsets"), partitions=2)
    group = _unique("ck-modern")
    member = _consumer_protocol_member(bootstrap, group, topic, 2)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    request = [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 3), TopicPartition(topic, 1, 4)])]
    try:
        refused = admin.alter_consumer_group_offsets(request)[group].result(timeout=30)
        assert [tp.error.name() for tp in refused.topic_partitions] == ["UNKNOWN_MEMBER_ID"] * 2
    finally:
        member.close()
    altered = admin.alter_consumer_group_offsets(request)[group].result(timeout=30)
    assert sorted((tp.partition, tp.offset, tp.error) for tp in altered.topic_partitions) == [(0, 3, None), (1, 4, None)]
    listed = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(timeout=30)
    assert sorted((tp.topic, tp.partition, tp.offset) for tp in listed.topic_partitions) == [(topic, 0, 3), (topic, 1, 4)]
    admin.delete_consumer_groups([group])[group].result(timeout=30)
    assert group not in {g.group_id for g in admin.list_consumer_groups().result(timeout=30).valid}


@pytest.mark.compat("group")
@pytest.mark.compat_client("kafka-python")
def test_kafka_python_group_admin_calls(bootstrap):
    """alter/reset/delete group offsets on an empty KIP-848 group, remove_group_members naming a
    static classic member."""
    from kafka import KafkaAdminClient, KafkaProducer, OffsetAndMetadata, OffsetSpec, TopicPartition
    from kafka.admin import MemberToRemove
    from kafka.errors import NoError

    topic = make_topic(bootstrap, _unique("kp-group-admin"), partitions=1)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(5):
        producer.send(topic, f"v{i}".encode(), partition=0).get(timeout=10)
    producer.close()
    modern, classic = _unique("kp-modern"), _unique("kp-classic")
    _consumer_protocol_member(bootstrap, modern, topic, 1).close()
    static = _consumer_protocol_member(bootstrap, classic, topic, 1, instance_id="kp-static")
    static.close()  # a static member stays in its group after close
    tp = TopicPartition(topic, 0)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.alter_group_offsets(modern, {tp: OffsetAndMetadata(2, None, -1)})
        assert admin.list_group_offsets(modern)[modern][tp].offset == 2
        admin.reset_group_offsets(modern, {tp: OffsetSpec.LATEST})
        assert admin.list_group_offsets(modern)[modern][tp].offset == 5
        admin.delete_group_offsets(modern, [tp])
        assert tp not in admin.list_group_offsets(modern)[modern]
        assert {g["group_id"]: g["group_type"] for g in admin.list_groups()}[modern] == "consumer"
        # DescribeGroups does not describe a consumer-protocol group, as on Kafka 4.
        assert "is not a classic group" in admin.describe_groups([modern])[modern]["error"]

        described = admin.describe_groups([classic])[classic]
        assert [m["group_instance_id"] for m in described["members"]] == ["kp-static"]
        removed = admin.remove_group_members(classic, [MemberToRemove(group_instance_id="kp-static")])
        assert list(removed.values()) == [NoError]
        described = admin.describe_groups([classic])[classic]
        assert (described["group_state"], described["members"]) == ("Empty", [])
    finally:
        admin.close()


@pytest.mark.compat("admin-configs")
@pytest.mark.compat_client("kafka-python")
def test_kafka_python_reset_configs_and_find_hanging_transactions(bootstrap):
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType

    topic = make_topic(bootstrap, _unique("kp-reset"), configs={"retention.ms": "1000"})
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)

    def retention():
        described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="all")
        entry = described["topic"][topic]["retention.ms"]
        return entry["value"], entry["config_source"]

    try:
        assert retention() == ("1000", "DYNAMIC_TOPIC_CONFIG")
        assert admin.reset_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={"retention.ms": None})]) \
            == {"topic": {topic: "OK"}}
        assert retention() == ("604800000", "DEFAULT_CONFIG")
        # DescribeProducers on every partition and ListTransactions: nothing hangs here.
        assert admin.find_hanging_transactions() == []
    finally:
        admin.close()


@pytest.mark.compat("transactions")
@pytest.mark.compat_client("java-4.3.0")
def test_java_force_terminate_transaction(java_client_43, bootstrap):
    """Admin.forceTerminateTransaction (KIP-939, InitProducerId from the admin client) aborts an
    open transaction and fences its producer."""
    k = java_client_43
    call = k.call
    topic = make_topic(bootstrap, _unique("force-terminate"))
    txn_id = _unique("terminated")
    producer = k.make_producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    call(producer.j.initTransactions)
    call(producer.j.beginTransaction)
    producer.send(topic, value=b"never committed")
    admin = k.make_admin({"bootstrap.servers": bootstrap})
    assert call(call(call(admin.j.forceTerminateTransaction, txn_id).result).get) is None
    assert _java_error(lambda: call(producer.j.commitTransaction)) in ("ProducerFencedException",
                                                                       "InvalidProducerEpochException")
    reader = k.make_consumer({"bootstrap.servers": bootstrap, "isolation.level": "read_committed"})
    reader.assign([(topic, 0)])
    assert reader.poll(500) == []
    (state,) = call(call(call(admin.j.describeTransactions, java_list(k.jvm, txn_id)).all).get).values()
    # Aborted, then the admin's InitProducerId bumped the epoch: Empty, as on Kafka.
    assert state.state().toString() == "Empty"
    # The abort marker follows the record: the log end is 2, the last stable offset too.
    assert admin.listOffsets([(topic, 0)], "latest")[(topic, 0)].offset == 2


@pytest.mark.compat("admin-topics")
@pytest.mark.compat_client("java-4.3.0")
def test_java_create_partitions_and_delete_records(java_client_43, bootstrap):
    k = java_client_43
    topic = make_topic(bootstrap, _unique("grow-java"), partitions=1)
    producer = k.make_producer({"bootstrap.servers": bootstrap})
    for i in range(4):
        producer.send(topic, value=f"v{i}", partition=0)
    admin = k.make_admin({"bootstrap.servers": bootstrap})
    admin.createPartitions(topic, 3)
    assert [p["partition"] for p in admin.describeTopics(topic)[topic]["partitions"]] == [0, 1, 2]
    with pytest.raises(KafkaJavaError) as fewer:
        admin.createPartitions(topic, 2)
    assert fewer.value.simple_name == "InvalidPartitionsException"
    admin.deleteRecords({(topic, 0): 3})
    assert admin.listOffsets([(topic, 0)], "earliest")[(topic, 0)].offset == 3
    with pytest.raises(KafkaJavaError) as beyond:
        admin.deleteRecords({(topic, 0): 9})
    assert beyond.value.simple_name == "OffsetOutOfRangeException"


@pytest.mark.compat("admin-topics")
@pytest.mark.compat_client("confluent-kafka")
def test_confluent_create_partitions_delete_records_and_scram_credentials(bootstrap):
    from confluent_kafka import Producer, TopicPartition
    from confluent_kafka.admin import (AdminClient, NewPartitions, ScramCredentialInfo, ScramMechanism,
                                       UserScramCredentialDeletion, UserScramCredentialUpsertion)

    topic = make_topic(bootstrap, _unique("grow-ck"), partitions=1)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(4):
        producer.produce(topic, f"v{i}".encode(), partition=0)
    assert producer.flush(30) == 0
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_partitions([NewPartitions(topic, 3)])[topic].result(timeout=30)
    (described,) = admin.list_topics(topic, timeout=30).topics.values()
    assert sorted(described.partitions) == [0, 1, 2]
    (deleted,) = admin.delete_records([TopicPartition(topic, 0, 3)]).values()
    assert deleted.result(timeout=30).low_watermark == 3

    user = _unique("ck-scram")
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096)
    for future in admin.alter_user_scram_credentials([UserScramCredentialUpsertion(user, info, b"pw")]).values():
        future.result(timeout=30)
    description = admin.describe_user_scram_credentials([user])[user].result(timeout=30)
    assert [(i.mechanism, i.iterations) for i in description.scram_credential_infos] == [(ScramMechanism.SCRAM_SHA_512, 4096)]
    for future in admin.alter_user_scram_credentials(
            [UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_512)]).values():
        future.result(timeout=30)


@pytest.mark.compat_client("kafka-python")
def test_kafka_python_scram_credentials(bootstrap):
    from kafka import KafkaAdminClient
    from kafka.admin import ScramMechanism, UserScramCredentialDeletion, UserScramCredentialUpsertion

    user = _unique("kp-scram")
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    mechanism = ScramMechanism.SCRAM_SHA_256
    try:
        assert admin.alter_user_scram_credentials([UserScramCredentialUpsertion(user, mechanism, "pw", iterations=8192)]) \
            == {user: None}
        assert admin.describe_user_scram_credentials([user]) == {
            user: {"error": None, "credential_infos": [{"mechanism": mechanism, "iterations": 8192}]}}
        assert admin.alter_user_scram_credentials([UserScramCredentialDeletion(user, mechanism)]) == {user: None}
        ((name, gone),) = admin.describe_user_scram_credentials([user]).items()
        assert (name, gone["credential_infos"]) == (user, [])
        assert gone["error"] == f"Attempt to describe a user credential that does not exist: {user}"
    finally:
        admin.close()


@pytest.mark.compat_client("java-4.3.0")
def test_java_renew_and_expire_delegation_tokens_are_refused_on_plaintext(java_client_43, bootstrap):
    """As Kafka without delegation.token.secret.key on a PLAINTEXT listener:
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED."""
    k = java_client_43
    call = k.call
    admin = k.make_admin({"bootstrap.servers": bootstrap})
    hmac = bytearray(b"not-a-token")
    renew = lambda: call(call(call(admin.j.renewDelegationToken, hmac).expiryTimestamp).get)  # noqa: E731
    expire = lambda: call(call(call(admin.j.expireDelegationToken, hmac).expiryTimestamp).get)  # noqa: E731
    assert (_java_error(renew), _java_error(expire)) == ("UnsupportedByAuthenticationException",) * 2


@pytest.mark.compat("admin-configs")
@pytest.mark.compat_client("confluent-kafka")
@pytest.mark.filterwarnings("ignore:.*deprecated:DeprecationWarning")  # both calls still exist; they are tried here
def test_confluent_legacy_alter_configs_and_list_groups(bootstrap):
    """AlterConfigs (33) replaces a topic's whole set of overrides; the old list_groups
    (ListGroups through librdkafka's rd_kafka_list_groups) sees a classic group."""
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    from trafka.testing.waiting import wait_until

    topic = make_topic(bootstrap, _unique("legacy-ck"), configs={"retention.ms": "1000", "segment.ms": "60000"})
    admin = AdminClient({"bootstrap.servers": bootstrap})
    (future,) = admin.alter_configs([ConfigResource(ResourceType.TOPIC, topic, set_config={"retention.ms": "5000"})]).values()
    future.result(timeout=30)
    (described,) = admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic)]).values()
    configs = described.result(timeout=30)
    assert (configs["retention.ms"].value, configs["retention.ms"].is_default) == ("5000", False)
    assert configs["segment.ms"].is_default  # not named: back to its default

    group = _unique("ck-legacy-group")
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "classic"})
    consumer.subscribe([topic])
    try:
        def listed():
            consumer.poll(0.1)
            return {g.id: g for g in admin.list_groups(timeout=10)}.get(group)

        found = wait_until(lambda: (g := listed()) is not None and g.state == "Stable" and g, 60, "the group listed Stable")
        assert (found.protocol_type, found.protocol, len(found.members)) == ("consumer", "range", 1)
    finally:
        consumer.close()


@pytest.mark.compat_client("java-4.3.0")
def test_java_share_consumer_beside_a_consumer_group_on_the_same_topic(java_client_43, bootstrap):
    """The Java 4.3 KafkaShareConsumer (explicit acknowledgement) gets every record of the topic
    once, RELEASE brings one back as its second delivery, and a consumer group reading the same
    topic meanwhile gets every record too: the two kinds of group do not see each other."""
    import time

    from confluent_kafka import Consumer, Producer

    from testkit.groups import create_topic

    create_topic(bootstrap, "java-shared", 1)
    k = java_client_43
    jvm, call = k.jvm, k.call
    admin = k.make_admin({"bootstrap.servers": bootstrap})
    share_reset_earliest(k, admin, "java-share")
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(5):
        producer.produce("java-shared", b"v%d" % i, partition=0)
    assert producer.flush(10) == 0

    share = java_share_consumer(k, bootstrap, "java-share", "java-shared", explicit=True)
    ack = jvm.org.apache.kafka.clients.consumer.AcknowledgeType
    try:
        seen: list[tuple[int, int]] = []
        released = False
        end = time.monotonic() + 60
        while len([s for s in seen if s[1] == 1]) < 5 or not any(s[1] == 2 for s in seen):
            assert time.monotonic() < end, f"records seen so far: {seen}"
            records = call(share.poll, jvm.java.time.Duration.ofMillis(500))
            iterator = call(records.iterator)
            while call(iterator.hasNext):
                record = call(iterator.next)
                offset, count = call(record.offset), call(call(record.deliveryCount).get)
                seen.append((offset, count))
                if offset == 2 and count == 1 and not released:
                    call(share.acknowledge, record, ack.RELEASE)
                    released = True
                else:
                    call(share.acknowledge, record, ack.ACCEPT)
            call(share.commitSync)
        assert sorted(seen) == [(0, 1), (1, 1), (2, 1), (2, 2), (3, 1), (4, 1)]
        # Admin.listShareGroupOffsets (DescribeShareGroupOffsets): every record is done with.
        specs = jvm.java.util.HashMap()
        specs.put("java-share", jvm.org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec())
        offsets = call(call(call(admin.j.listShareGroupOffsets, specs).all).get).get("java-share")
        assert {(call(tp.topic), call(tp.partition)): call(info.startOffset) for tp, info in offsets.items()} == {
            ("java-shared", 0): 5}
    finally:
        call(share.close)
    plain = Consumer({"bootstrap.servers": bootstrap, "group.id": "plain-readers", "auto.offset.reset": "earliest"})
    plain.subscribe(["java-shared"])
    values, end = [], time.monotonic() + 30
    while len(values) < 5 and time.monotonic() < end:
        message = plain.poll(0.5)
        if message is not None and message.error() is None:
            values.append(message.value())
    plain.close()
    assert values == [b"v%d" % i for i in range(5)]


@pytest.mark.compat_client("java-4.3.0")
def test_java_share_consumer_renews_a_lock_with_acknowledge_type_renew(java_client_43, tmp_path):
    """AcknowledgeType.RENEW (ShareFetch / ShareAcknowledge v2, KIP-1222): a record the member
    renews stays its own past the first lock's end (another member of the group gets only the
    record released beside it), and the member ACCEPTs it afterwards. Broker time is moved with the test clock, so no test step waits for a lock."""
    import time

    from confluent_kafka import Producer

    from testkit.groups import create_topic
    from trafka.testing import TrafkaBroker

    config = {"group.share.record.lock.duration.ms": 30000, "group.share.session.timeout.ms": 600000,
              "group.share.max.session.timeout.ms": 600000}
    with TrafkaBroker(data_dir=tmp_path / "data", config=config) as broker:
        bootstrap = broker.bootstrap_servers
        create_topic(bootstrap, "renewed", 1)
        k = java_client_43
        jvm, call = k.jvm, k.call
        admin = k.make_admin({"bootstrap.servers": bootstrap})
        share_reset_earliest(k, admin, "renewers")
        producer = Producer({"bootstrap.servers": bootstrap})
        for i in range(2):
            producer.produce("renewed", b"r%d" % i, partition=0)
        assert producer.flush(10) == 0

        def share_consumer():
            return java_share_consumer(k, bootstrap, "renewers", "renewed", explicit=True)

        def poll(consumer, seconds: float) -> list:
            found, end = [], time.monotonic() + seconds
            while time.monotonic() < end and not found:  # explicit mode: acknowledge before polling again
                iterator = call(call(consumer.poll, jvm.java.time.Duration.ofMillis(300)).iterator)
                while call(iterator.hasNext):
                    found.append(call(iterator.next))
            return found

        def commit_errors(consumer) -> list:
            results = call(consumer.commitSync)
            return [str(call(v.get)) for v in results.values() if call(v.isPresent)]

        def share_offsets() -> dict:
            """Admin.listShareGroupOffsets (DescribeShareGroupOffsets v1): (start offset, lag)."""
            specs = jvm.java.util.HashMap()
            specs.put("renewers", jvm.org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec())
            offsets = call(call(call(admin.j.listShareGroupOffsets, specs).all).get).get("renewers")
            return {(call(tp.topic), call(tp.partition)): (call(info.startOffset), call(call(info.lag).get))
                    for tp, info in offsets.items()}

        ack = jvm.org.apache.kafka.clients.consumer.AcknowledgeType
        first = share_consumer()
        second = None
        try:
            held = poll(first, 30)
            assert sorted(call(r.offset) for r in held) == [0, 1]
            broker.advance_clock(20_000)
            renewed = next(r for r in held if call(r.offset) == 0)
            call(first.acknowledge, renewed, ack.RENEW)
            call(first.acknowledge, next(r for r in held if call(r.offset) == 1), ack.RELEASE)
            assert commit_errors(first) == []
            broker.advance_clock(20_000)  # 40 s: past the first lock, inside the renewed one
            second = share_consumer()
            redelivered = poll(second, 8)
            # offset 1 was released and comes back as its second delivery; offset 0, whose first
            # lock ran out at 30 s, is still held by the first member
            assert [(call(r.offset), call(call(r.deliveryCount).get)) for r in redelivered] == [(1, 2)]
            call(second.acknowledge, redelivered[0], ack.ACCEPT)
            assert commit_errors(second) == []
            assert share_offsets() == {("renewed", 0): (0, 1)}  # offset 0 is still to be done
            again = poll(first, 8)  # the client hands a renewed record out again to be acknowledged
            assert [call(r.offset) for r in again] == [0]
            call(first.acknowledge, again[0], ack.ACCEPT)
            assert commit_errors(first) == []
            assert share_offsets() == {("renewed", 0): (2, 0)}
        finally:
            call(first.close)
            if second is not None:
                call(second.close)


@pytest.mark.compat_client("java-4.3.0")
def test_java_admin_alters_and_deletes_share_group_offsets(java_client_43, bootstrap):
    """Admin.alterShareGroupOffsets (AlterShareGroupOffsets) moves an empty share group's start
    offset back to the log start, and the group reads everything again; refused with members (GroupNotEmptyException);
    Admin.deleteShareGroupOffsets (DeleteShareGroupOffsets) forgets the topic, so the group
    starts again by share.auto.offset.reset."""
    import time

    from confluent_kafka import Producer

    from testkit.groups import create_topic

    create_topic(bootstrap, "reset-shared", 1)
    k = java_client_43
    jvm, call = k.jvm, k.call
    admin = k.make_admin({"bootstrap.servers": bootstrap})
    group = "resetters"
    share_reset_earliest(k, admin, group)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(6):
        producer.produce("reset-shared", b"s%d" % i, partition=0)
    assert producer.flush(10) == 0
    tp = jvm.org.apache.kafka.common.TopicPartition("reset-shared", 0)

    def read_all(expected: int):
        """A share consumer of the group that accepts what it gets until `expected` records."""
        consumer = java_share_consumer(k, bootstrap, group, "reset-shared")
        seen, end = [], time.monotonic() + 30
        while len(seen) < expected and time.monotonic() < end:
            iterator = call(call(consumer.poll, jvm.java.time.Duration.ofMillis(300)).iterator)
            while call(iterator.hasNext):
                seen.append(call(call(iterator.next).offset))
        call(consumer.commitSync)
        return consumer, sorted(seen)

    def offsets() -> dict:
        specs = jvm.java.util.HashMap()
        specs.put(group, jvm.org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec())
        found = call(call(call(admin.j.listShareGroupOffsets, specs).all).get).get(group)
        return {(call(t.topic), call(t.partition)): None if info is None else call(info.startOffset)
                for t, info in found.items()}

    # py4j hands Python ints to Java as Integer; the consumer's beginningOffsets is a ready
    # Map<TopicPartition, Long> ({tp: 0}) to pass on as it is.
    plain = k.make_consumer({"bootstrap.servers": bootstrap,
                             "key.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
                             "value.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer"})
    to_start = call(plain.j.beginningOffsets, java_list(jvm, tp))

    def alter():
        call(call(call(admin.j.alterShareGroupOffsets, group, to_start).all).get)

    consumer, seen = read_all(6)
    call(consumer.close)
    assert seen == [0, 1, 2, 3, 4, 5]
    assert offsets() == {("reset-shared", 0): 6}
    alter()
    assert offsets() == {("reset-shared", 0): 0}
    consumer, seen = read_all(6)
    try:
        assert seen == [0, 1, 2, 3, 4, 5]  # read again from the altered start offset
        with pytest.raises(KafkaJavaError, match="GroupNotEmpty"):
            alter()
    finally:
        call(consumer.close)
    topics = jvm.java.util.HashSet()
    topics.add("reset-shared")
    call(call(call(admin.j.deleteShareGroupOffsets, group, topics).all).get)
    assert offsets().get(("reset-shared", 0)) is None
    consumer, seen = read_all(6)
    call(consumer.close)
    assert seen == [0, 1, 2, 3, 4, 5]  # share.auto.offset.reset=earliest again


@pytest.mark.compat_client("java-4.3.0")
def test_java_admin_sets_a_cluster_wide_dynamic_broker_default(java_client_43, tmp_path):
    """`kafka-configs --alter --entity-type brokers --entity-default` through the Java admin:
    IncrementalAlterConfigs on BROKER "" sets a cluster default every topic without its own value
    takes at once (DYNAMIC_DEFAULT_BROKER_CONFIG), describing "" lists only the dynamic defaults,
    a per-broker-only setting is refused at that level, another node id is refused, and the
    default survives a restart."""
    from trafka.testing import TrafkaBroker

    k = java_client_43
    jvm, call = k.jvm, k.call
    admin_classes = jvm.org.apache.kafka.clients.admin
    resource_type = jvm.org.apache.kafka.common.config.ConfigResource.Type

    def alter(admin, name: str, values: dict):
        op = admin_classes.AlterConfigOp.OpType
        ops = [admin_classes.AlterConfigOp(admin_classes.ConfigEntry(n, v), op.DELETE if v is None else op.SET)
               for n, v in values.items()]
        changes = jvm.java.util.HashMap()
        changes.put(jvm.org.apache.kafka.common.config.ConfigResource(resource_type.BROKER, name), java_list(jvm, *ops))
        call(call(call(admin.j.incrementalAlterConfigs, changes).all).get)

    def describe(admin, kind, name: str) -> dict:
        resource = jvm.org.apache.kafka.common.config.ConfigResource(kind, name)
        found = call(call(call(admin.j.describeConfigs, java_list(jvm, resource)).all).get).get(resource)
        return {call(e.name): (call(e.value), str(call(e.source))) for e in _jiter(call(found.entries))}

    with TrafkaBroker(data_dir=tmp_path / "data") as broker:
        admin = k.make_admin({"bootstrap.servers": broker.bootstrap_servers})
        call(call(call(admin.j.createTopics, java_list(jvm, admin_classes.NewTopic("defaults", 1, 1))).all).get)
        alter(admin, "", {"log.retention.ms": "7200000", "log.cleanup.policy": "compact"})
        topic = describe(admin, resource_type.TOPIC, "defaults")
        assert topic["retention.ms"] == ("7200000", "DYNAMIC_DEFAULT_BROKER_CONFIG")
        assert topic["cleanup.policy"] == ("compact", "DYNAMIC_DEFAULT_BROKER_CONFIG")
        assert describe(admin, resource_type.BROKER, "") == {
            "log.cleanup.policy": ("compact", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
            "log.retention.ms": ("7200000", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
            "min.insync.replicas": ("1", "DYNAMIC_DEFAULT_BROKER_CONFIG"),  # KIP-966, written at first start
        }
        with pytest.raises(KafkaJavaError, match="broker id must be specified"):
            alter(admin, "", {"ssl.client.auth": "required"})
        with pytest.raises(KafkaJavaError, match="InvalidRequestException"):
            alter(admin, "", {"num.partitions": "3"})  # read-only in Kafka
        broker.restart()
        admin = k.make_admin({"bootstrap.servers": broker.bootstrap_servers})
        assert describe(admin, resource_type.TOPIC, "defaults")["retention.ms"] == ("7200000", "DYNAMIC_DEFAULT_BROKER_CONFIG")
        alter(admin, "", {"log.retention.ms": None, "log.cleanup.policy": None})
        assert describe(admin, resource_type.TOPIC, "defaults")["retention.ms"] == ("604800000", "DEFAULT_CONFIG")
