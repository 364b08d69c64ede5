"""ACLs seen by Java kafka-clients 3.9.1 and 4.3.0 (produce and a consumer group, denied then allowed), by
kcat (a denied and an allowed produce), and for an mTLS client whose principal is its
certificate's subject."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from cryptography import x509
from testkit.acl import JAAS, STANDARD_AUTHORIZER, allow, confluent_admin, unique
from testkit.acl_clients import produce_confluent
from testkit.clients.kcat import kcat_options
from testkit.java import KafkaJavaError, running_jvm
from testkit.security import Auth
from testkit.tls import make_pki

from trafka.testing import TrafkaBroker


@pytest.fixture(scope="module", params=["3.9.1", "4.3.0"])
def java(request):
    yield from running_jvm(request.param)


def _create_topic(broker, name: str) -> None:
    from confluent_kafka.admin import NewTopic

    admin = confluent_admin(broker)
    for future in admin.create_topics([NewTopic(name, 1)]).values():
        future.result(30)


def test_java_producer_and_consumer_group_denied_then_allowed(broker, java):
    props = {"bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
             "sasl.mechanism": "PLAIN",
             "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                                 'username="alice" password="alice-secret";'}
    prefix = unique("java" + java.version.replace(".", ""))
    topic, group = prefix + "-events", prefix + "-group"
    _create_topic(broker, topic)
    try:
        with pytest.raises(KafkaJavaError) as info:
            java.make_producer({**props, "max.block.ms": 10000}).send(topic, value=b"refused")
        assert info.value.simple_name == "TopicAuthorizationException"

        admin = confluent_admin(broker)
        allow(admin, "User:alice", "TOPIC", prefix, "WRITE", pattern="PREFIXED")
        allow(admin, "User:alice", "TOPIC", prefix, "READ", pattern="PREFIXED")
        java.make_producer(props).send(topic, value=b"allowed")
        # describeTopics (with authorized operations) reports what alice may do with the topic.
        jvm = java.jvm
        names = jvm.java.util.ArrayList()
        names.add(topic)
        options = jvm.org.apache.kafka.clients.admin.DescribeTopicsOptions().includeAuthorizedOperations(True)
        java_admin = java.make_admin(props)
        described = java_admin._get(java.call(java_admin.j.describeTopics, names, options).allTopicNames())
        operations = {op.name() for op in described.get(topic).authorizedOperations().toArray()}
        assert operations == {"READ", "WRITE", "DESCRIBE"}

        consumer = java.make_consumer({**props, "group.id": group, "auto.offset.reset": "earliest"})
        consumer.subscribe([topic])
        with pytest.raises(KafkaJavaError) as info:
            consumer.poll(5000)
        assert info.value.simple_name == "GroupAuthorizationException"
        consumer.close()

        allow(admin, "User:alice", "GROUP", prefix, "READ", pattern="PREFIXED")
        consumer = java.make_consumer({**props, "group.id": group, "auto.offset.reset": "earliest"})
        consumer.subscribe([topic])
        assert [r.value for r in consumer.poll_until(1)] == [b"allowed"]

        # A delegation token for another owner needs CREATE_TOKENS on that user; with it, the
        # broker's answer is that token authentication is off (no delegation.token.secret.key).
        # One owner per run: the module's broker keeps the CREATE_TOKENS ACL the other JVM's run made.
        owner_name = prefix + "-owner"
        owner = jvm.org.apache.kafka.common.security.auth.KafkaPrincipal("User", owner_name)
        token_options = jvm.org.apache.kafka.clients.admin.CreateDelegationTokenOptions().owner(owner)
        with pytest.raises(KafkaJavaError) as info:
            java_admin._get(java.call(java_admin.j.createDelegationToken, token_options).delegationToken())
        assert info.value.simple_name == "DelegationTokenAuthorizationException"
        acl, res = jvm.org.apache.kafka.common.acl, jvm.org.apache.kafka.common.resource
        bindings = jvm.java.util.ArrayList()  # confluent-kafka has no USER resource nor CREATE_TOKENS: Java makes it
        bindings.add(acl.AclBinding(res.ResourcePattern(res.ResourceType.USER, "User:" + owner_name,
                                                                 res.PatternType.LITERAL),
                                    acl.AccessControlEntry("User:alice", "*", acl.AclOperation.CREATE_TOKENS,
                                                           acl.AclPermissionType.ALLOW)))
        super_admin = java.make_admin({**props, "sasl.jaas.config": props["sasl.jaas.config"].replace(
            'username="alice" password="alice-secret"', 'username="admin" password="admin-secret"')})
        super_admin._get(java.call(super_admin.j.createAcls, bindings).all())
        with pytest.raises(KafkaJavaError) as info:
            java_admin._get(java.call(java_admin.j.createDelegationToken, token_options).delegationToken())
        assert info.value.simple_name == "DelegationTokenDisabledException"
    finally:
        java.close_clients()


@pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat is not installed (testkit/setup_deps.py)")
def test_kcat_produce_denied_then_allowed(broker):
    topic = unique("kcat")
    _create_topic(broker, topic)
    options = kcat_options(Auth("SASL_PLAINTEXT", "PLAIN", "bob", "bob-secret"), message_timeout_ms="10000")
    command = ["kcat", "-b", broker.bootstrap("SASL_PLAINTEXT"), *options, "-P", "-t", topic]
    refused = subprocess.run(command, input=b"refused\n", capture_output=True, timeout=60)
    assert refused.returncode != 0 and b"Topic authorization failed" in refused.stderr, refused.stderr
    allow(confluent_admin(broker), "User:bob", "TOPIC", topic, "WRITE")
    allowed = subprocess.run(command, input=b"allowed\n", capture_output=True, timeout=60)
    assert allowed.returncode == 0, allowed.stderr


def test_mtls_principal_is_the_certificate_subject(tmp_path):
    pki = make_pki(tmp_path / "pki")
    server = pki.issue("broker", server=True, password=b"keystore-secret")
    client = pki.issue("carol-client")
    config = {
        "listeners": "SASL_PLAINTEXT://127.0.0.1:0,MTLS://127.0.0.1:0",
        "listener.security.protocol.map": "SASL_PLAINTEXT:SASL_PLAINTEXT,MTLS:SSL",
        "sasl.enabled.mechanisms": "PLAIN", "sasl.jaas.config": JAAS,
        "ssl.keystore.type": "PKCS12", "ssl.keystore.location": server["keystore.p12"],
        "ssl.keystore.password": "keystore-secret", "ssl.truststore.type": "PEM", "ssl.truststore.location": pki.ca_pem,
        "ssl.client.auth": "required",
        "authorizer.class.name": STANDARD_AUTHORIZER, "super.users": "User:admin",
    }
    broker = TrafkaBroker(data_dir=tmp_path / "data", config=config)
    broker.start()
    try:
        topic = unique("mtls")
        _create_topic(broker, topic)
        auth = Auth("SSL", ca=pki.ca_pem, cert=client["cert.pem"], key=client["key.pem"])
        assert produce_confluent(broker.bootstrap("MTLS"), auth, topic, b"x") == "TOPIC_AUTHORIZATION_FAILED"
        subject = x509.load_pem_x509_certificate(client["cert.pem"].read_bytes()).subject.rfc4514_string()
        principal = "User:" + subject  # User:CN=carol-client,O=trafka tests
        assert principal == "User:CN=carol-client,O=trafka tests"
        allow(confluent_admin(broker), principal, "TOPIC", topic, "WRITE")
        assert produce_confluent(broker.bootstrap("MTLS"), auth, topic, b"x") is None
    finally:
        broker.stop()
