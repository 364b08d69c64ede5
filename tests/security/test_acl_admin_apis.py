"""CreateAcls / DescribeAcls / DeleteAcls driven by confluent-kafka, kafka-python and Java 4.3
Admin against a broker with StandardAuthorizer on; the ACLs survive a restart."""

from __future__ import annotations

import pytest
from testkit.acl import CONFLUENT_NAMES, acl_broker, allow, confluent_admin, login, unique
from testkit.security import kafka_python_config

from testkit.java import JavaKafka, JavaUnavailable


def _binding(resource, name, pattern, principal, operation, permission="ALLOW", host="*"):
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType

    return AclBinding(ResourceType[CONFLUENT_NAMES.get(resource, resource)], name, ResourcePatternType[pattern], principal, host,
                      AclOperation[operation], AclPermissionType[permission])


def _filter(resource="ANY", name=None, pattern="ANY", principal=None, operation="ANY", permission="ANY"):
    from confluent_kafka.admin import (AclBindingFilter, AclOperation, AclPermissionType, ResourcePatternType,
                                       ResourceType)

    return AclBindingFilter(ResourceType[CONFLUENT_NAMES.get(resource, resource)], name, ResourcePatternType[pattern], principal, None,
                            AclOperation[operation], AclPermissionType[permission])


def _described(admin, acl_filter) -> set[tuple]:
    return {(b.restype.name, b.name, b.resource_pattern_type.name, b.principal, b.host, b.operation.name,
             b.permission_type.name) for b in admin.describe_acls(acl_filter).result(30)}


def test_confluent_create_describe_match_and_delete(broker):
    admin = confluent_admin(broker)
    prefix = unique("orders")
    bindings = [
        _binding("TOPIC", prefix + "-", "PREFIXED", "User:alice", "READ"),
        _binding("TOPIC", prefix + "-eu", "LITERAL", "User:alice", "WRITE"),
        _binding("TOPIC", "*", "LITERAL", "User:carol", "DESCRIBE"),
        _binding("GROUP", prefix, "LITERAL", "User:alice", "READ", "DENY", host="10.0.0.1"),
    ]
    for future in admin.create_acls(bindings).values():
        assert future.result(30) is None

    # MATCH: every pattern that covers the name — the literal, the prefix and the `*` wildcard.
    matched = _described(admin, _filter("TOPIC", prefix + "-eu", "MATCH"))
    assert matched == {
        ("TOPIC", prefix + "-", "PREFIXED", "User:alice", "*", "READ", "ALLOW"),
        ("TOPIC", prefix + "-eu", "LITERAL", "User:alice", "*", "WRITE", "ALLOW"),
        ("TOPIC", "*", "LITERAL", "User:carol", "*", "DESCRIBE", "ALLOW"),
    }
    # ANY pattern type with a name: only patterns with exactly that name.
    assert _described(admin, _filter("TOPIC", prefix + "-", "ANY")) == {
        ("TOPIC", prefix + "-", "PREFIXED", "User:alice", "*", "READ", "ALLOW")}
    assert _described(admin, _filter("GROUP", principal="User:alice")) >= {
        ("GROUP", prefix, "LITERAL", "User:alice", "10.0.0.1", "READ", "DENY")}

    deleted = admin.delete_acls([_filter("TOPIC", prefix + "-eu", "MATCH", principal="User:alice")])
    [result] = deleted.values()
    assert {(b.name, b.operation.name) for b in result.result(30)} == {(prefix + "-", "READ"), (prefix + "-eu", "WRITE")}
    assert _described(admin, _filter("TOPIC", prefix + "-eu", "MATCH")) == {
        ("TOPIC", "*", "LITERAL", "User:carol", "*", "DESCRIBE", "ALLOW")}


def test_invalid_bindings_are_refused_one_by_one(broker):
    from confluent_kafka import KafkaException

    admin = confluent_admin(broker)
    good = _binding("TOPIC", unique("fine"), "LITERAL", "User:alice", "READ")
    bad_cluster = _binding("CLUSTER", "not-the-cluster", "LITERAL", "User:alice", "ALTER")
    bad_principal = _binding("TOPIC", "t", "LITERAL", "alice-without-type", "READ")
    futures = admin.create_acls([good, bad_cluster, bad_principal])
    assert futures[good].result(30) is None
    for bad, words in ((bad_cluster, "kafka-cluster"), (bad_principal, "principal")):
        with pytest.raises(KafkaException) as info:
            futures[bad].result(30)
        assert info.value.args[0].name() == "INVALID_REQUEST" and words in info.value.args[0].str()


def test_only_cluster_alter_may_change_acls(broker):
    from confluent_kafka import KafkaException

    alice = confluent_admin(broker, "alice")
    binding = _binding("TOPIC", unique("mine"), "LITERAL", "User:alice", "ALL")
    with pytest.raises(KafkaException) as info:
        alice.create_acls([binding])[binding].result(30)
    assert info.value.args[0].name() == "CLUSTER_AUTHORIZATION_FAILED"
    # librdkafka drops DescribeAcls' error code (an empty list comes back); kafka-python shows it.
    assert _kafka_python_describe_error(broker, "alice") == "ClusterAuthorizationFailedError"
    # Granted ALTER on the cluster, alice may create ACLs; DESCRIBE is implied by ALTER.
    allow(confluent_admin(broker), "User:alice", "CLUSTER", "kafka-cluster", "ALTER")
    assert alice.create_acls([binding])[binding].result(30) is None
    assert ("TOPIC", binding.name, "LITERAL", "User:alice", "*", "ALL", "ALLOW") in _described(alice, _filter())
    assert ("BROKER", "kafka-cluster", "LITERAL", "User:alice", "*", "ALTER", "ALLOW") in _described(alice, _filter())


def _kafka_python_describe_error(broker, user: str) -> str | None:
    from kafka.admin import (ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, KafkaAdminClient,
                             ResourcePatternFilter, ResourceType)
    from kafka.errors import KafkaError

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap("SASL_PLAINTEXT"), **kafka_python_config(login(user)))
    try:
        _, error = admin.describe_acls(ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                                                 ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)))
        return type(error).__name__ if error.errno else None
    except KafkaError as exc:
        return type(exc).__name__
    finally:
        admin.close()


def test_kafka_python_admin_acl_calls(broker):
    from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType,
                             KafkaAdminClient, ResourcePattern, ResourcePatternFilter, ResourceType)

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap("SASL_PLAINTEXT"), **kafka_python_config(login("admin")))
    try:
        name = unique("kp")
        acl = ACL("User:bob", "*", ACLOperation.WRITE, ACLPermissionType.ALLOW,
                  ResourcePattern(ResourceType.TOPIC, name, ACLResourcePatternType.PREFIXED))
        created = admin.create_acls([acl])
        assert created["failed"] == [] and len(created["succeeded"]) == 1
        acl_filter = ACLFilter("User:bob", None, ACLOperation.ANY, ACLPermissionType.ANY,
                               ResourcePatternFilter(ResourceType.TOPIC, name + "-x", ACLResourcePatternType.MATCH))
        described, error = admin.describe_acls(acl_filter)
        assert error.errno == 0
        assert [(a.principal, a.operation, a.resource_pattern.resource_name) for a in described] == [
            ("User:bob", ACLOperation.WRITE, name)]
        [(_, deleted, error)] = admin.delete_acls([acl_filter])
        assert error.errno == 0 and [a.resource_pattern.resource_name for a in deleted] == [name]
        described, _ = admin.describe_acls(acl_filter)
        assert described == []
    finally:
        admin.close()


def test_java_admin_create_describe_delete_acls(broker):
    try:
        java = JavaKafka("4.3.0")
    except JavaUnavailable as exc:
        pytest.skip(f"Java kafka-clients 4.3.0 unavailable: {exc}")
    try:
        jvm = java.jvm
        acl = jvm.org.apache.kafka.common.acl
        res = jvm.org.apache.kafka.common.resource
        admin = java.make_admin({
            "bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                                'username="admin" password="admin-secret";'})
        name = unique("java")
        pattern = res.ResourcePattern(res.ResourceType.GROUP, name, res.PatternType.LITERAL)
        entry = acl.AccessControlEntry("User:alice", "*", acl.AclOperation.READ, acl.AclPermissionType.ALLOW)
        bindings = jvm.java.util.ArrayList()
        bindings.add(acl.AclBinding(pattern, entry))
        admin._get(java.call(admin.j.createAcls, bindings).all())
        group_filter = acl.AclBindingFilter(
            res.ResourcePatternFilter(res.ResourceType.GROUP, name, res.PatternType.MATCH),
            acl.AccessControlEntryFilter.ANY)
        described = admin._get(java.call(admin.j.describeAcls, group_filter).values())
        assert [b.toString() for b in described.iterator()] == [acl.AclBinding(pattern, entry).toString()]
        filters = jvm.java.util.ArrayList()
        filters.add(group_filter)
        deleted = admin._get(java.call(admin.j.deleteAcls, filters).all())
        assert deleted.size() == 1
        assert admin._get(java.call(admin.j.describeAcls, group_filter).values()).size() == 0
    finally:
        java.close_clients()
        java.shutdown()


def test_acls_survive_a_restart(tmp_path):
    broker = acl_broker(tmp_path / "data")
    broker.start()
    try:
        name = unique("durable")
        allow(confluent_admin(broker), "User:alice", "TOPIC", name, "READ", pattern="PREFIXED")
        broker.restart()
        assert _described(confluent_admin(broker), _filter("TOPIC", name + "-1", "MATCH")) == {
            ("TOPIC", name, "PREFIXED", "User:alice", "*", "READ", "ALLOW")}
        assert name.encode() in b"".join(p.read_bytes() for p in (tmp_path / "data" / "metadata").rglob("*.log"))
    finally:
        broker.stop()

