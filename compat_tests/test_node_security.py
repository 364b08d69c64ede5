"""KafkaJS and @platformatic/kafka on secured listeners: SASL/PLAIN, SCRAM-SHA-256/512 and
OAUTHBEARER (unsecured JWT) over SASL_PLAINTEXT and SASL_SSL, SSL, and mTLS, each a round trip of
records in several batches; a wrong password refused; and ACLs created, listed and deleted with
the client's own admin, enforced on its own producer and consumer. One secured broker and one ACL
broker for the module (testkit.security.secure_config, testkit.acl)."""

from __future__ import annotations

import uuid

import pytest

from compat_tests.conftest import NODE_FIXTURES
from testkit.acl import acl_broker, login
from testkit.clients.base import Auth, Msg
from testkit.clients.node import Node, NodeError
from testkit.security import KEYSTORE_PASSWORD, secure_config, upsert_scram
from testkit.tls import make_pki
from trafka.testing import TrafkaBroker

NODE = list(NODE_FIXTURES)
SCRAM = {"SCRAM-SHA-256": ("sam256", "sam-secret-256"), "SCRAM-SHA-512": ("sam512", "sam-secret-512")}


def unique(what: str) -> str:
    return f"{what}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    pki = make_pki(tmp_path_factory.mktemp("node-pki"))
    pki.broker = pki.issue("broker", server=True, password=KEYSTORE_PASSWORD.encode())
    pki.client = pki.issue("node-client")
    return pki


@pytest.fixture(scope="module")
def secure_broker(pki, tmp_path_factory):
    broker = TrafkaBroker(data_dir=tmp_path_factory.mktemp("node-secure") / "data", config=secure_config(pki))
    broker.start()
    try:
        for mechanism, (user, password) in SCRAM.items():
            upsert_scram(broker.bootstrap("PLAINTEXT"), user, password, mechanism)
        yield broker
    finally:
        broker.stop()


CASES = ["SASL_PLAINTEXT-PLAIN", "SASL_PLAINTEXT-SCRAM-SHA-256", "SASL_PLAINTEXT-SCRAM-SHA-512", "SASL_PLAINTEXT-OAUTHBEARER",
         "SSL", "SASL_SSL-PLAIN", "SASL_SSL-SCRAM-SHA-512", "SASL_SSL-OAUTHBEARER", "MTLS"]


def auths(pki) -> dict[str, tuple[str, Auth]]:
    """Listener and login per case (users of testkit.security's JAAS lines and SCRAM above)."""
    return {
        "SASL_PLAINTEXT-PLAIN": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret")),
        "SASL_PLAINTEXT-SCRAM-SHA-256": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "SCRAM-SHA-256", *SCRAM["SCRAM-SHA-256"])),
        "SASL_PLAINTEXT-SCRAM-SHA-512": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "SCRAM-SHA-512", *SCRAM["SCRAM-SHA-512"])),
        "SASL_PLAINTEXT-OAUTHBEARER": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "OAUTHBEARER", "oauth-user")),
        "SSL": ("SSL", Auth("SSL", ca=pki.ca_pem)),
        "SASL_SSL-PLAIN": ("SASL_SSL", Auth("SASL_SSL", "PLAIN", "bob", "bob-secret", ca=pki.ca_pem)),
        "SASL_SSL-SCRAM-SHA-512": ("SASL_SSL", Auth("SASL_SSL", "SCRAM-SHA-512", *SCRAM["SCRAM-SHA-512"], ca=pki.ca_pem)),
        "SASL_SSL-OAUTHBEARER": ("SASL_SSL", Auth("SASL_SSL", "OAUTHBEARER", "oauth-user", ca=pki.ca_pem)),
        "MTLS": ("MTLS", Auth("SSL", ca=pki.ca_pem, cert=pki.client["cert.pem"], key=pki.client["key.pem"])),
    }


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("client", NODE)
def test_round_trip_on_a_secured_listener(request, secure_broker, pki, client, case):
    """300 records in 3 sends (gzip), read back from offset 0, through one listener and login;
    the topic is created by the client's own admin over the same connection settings."""
    listener, auth = auths(pki)[case]
    d = Node(secure_broker.bootstrap(listener), request.getfixturevalue(NODE_FIXTURES[client]), auth)
    topic = unique(f"sec-{client}")
    if client == "kafkajs":
        assert d.admin("createTopics", {"topics": [{"topic": topic, "numPartitions": 1}]}) is True
    else:
        d.admin("createTopics", {"topics": [topic], "partitions": 1, "replicas": 1})
    msgs = [Msg(b"k%d" % i, b"%s-%d" % (case.encode(), i)) for i in range(300)]
    assert d.produce(topic, msgs, codec="gzip", chunk=100) == list(range(300))
    assert [(g.offset, g.value) for g in d.consume(topic, 300)] == [(i, m.value) for i, m in enumerate(msgs)]


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
@pytest.mark.parametrize("client", NODE)
def test_a_wrong_password_is_refused(request, secure_broker, client, mechanism):
    d = Node(secure_broker.bootstrap("SASL_PLAINTEXT"), request.getfixturevalue(NODE_FIXTURES[client]),
             Auth("SASL_PLAINTEXT", mechanism, "alice" if mechanism == "PLAIN" else SCRAM[mechanism][0], "wrong"))
    with pytest.raises(NodeError) as refused:
        d.admin("listTopics", timeout=60)
    if client == "kafkajs":  # KafkaJS reports the broker's error message, not its code
        assert refused.value.name == "KafkaJSSASLAuthenticationError" and "Authentication failed" in refused.value.text()
    else:
        assert "SASL_AUTHENTICATION_FAILED" in refused.value.kafka_errors(), refused.value.text()


@pytest.fixture(scope="module")
def acls_broker(tmp_path_factory):
    broker = acl_broker(tmp_path_factory.mktemp("node-acl") / "data")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def _acl(client: str, principal: str, resource: str, name: str, operation: str) -> dict:
    """One ACL in the client's own terms (KafkaJS's names, @platformatic/kafka's numbers)."""
    if client == "kafkajs":
        return {"resourceType": resource, "resourceName": name, "principal": principal, "operation": operation}
    numbers = {"TOPIC": 2, "GROUP": 3, "LITERAL": 3, "ALLOW": 3, "READ": 3, "WRITE": 4, "DESCRIBE": 8, "ANY": 1}
    return {"resourceType": numbers[resource], "resourceName": name, "resourcePatternType": numbers["LITERAL"],
            "principal": principal, "host": "*", "operation": numbers[operation], "permissionType": numbers["ALLOW"]}


@pytest.mark.parametrize("client", NODE)
def test_acls_made_by_the_clients_admin_are_enforced(request, acls_broker, client):
    """alice may not write nor read a topic until the client's admin (as the super user) grants
    her WRITE and READ on it (and READ on a group); the ACLs are listed back by a filter; deleted,
    they stop applying."""
    node = request.getfixturevalue(NODE_FIXTURES[client])
    bootstrap = acls_broker.bootstrap("SASL_PLAINTEXT")
    admin, alice = Node(bootstrap, node, login("admin")), Node(bootstrap, node, login("alice"))
    topic = unique(f"acl-{client}")
    if client == "kafkajs":
        admin.admin("createTopics", {"topics": [{"topic": topic, "numPartitions": 1}]})
    else:
        admin.admin("createTopics", {"topics": [topic], "partitions": 1, "replicas": 1})
    msgs = [Msg(b"k", b"v%d" % i) for i in range(50)]
    with pytest.raises(NodeError) as denied:
        alice.produce(topic, msgs)
    assert "TOPIC_AUTHORIZATION_FAILED" in denied.value.text() or "authoriz" in denied.value.text().lower(), denied.value.text()

    grants = [_acl(client, "User:alice", "TOPIC", topic, op) for op in ("WRITE", "READ", "DESCRIBE")]
    grants.append(_acl(client, "User:alice", "GROUP", "*", "READ"))  # KafkaJS reads as a group member
    if client == "kafkajs":
        admin.admin("createAcls", {"acls": grants})
        listed = admin.admin("describeAcls", {"filter": {"resourceType": "TOPIC", "resourceName": topic,
                                                         "principal": "User:alice", "operation": "ANY",
                                                         "permissionType": "ANY", "patternType": "ANY"}})
        ops = {a["operation"] for r in listed["resources"] for a in r["acls"]}
        assert ops == {4, 3, 8}, listed  # WRITE, READ, DESCRIBE
    else:
        admin.admin("createAcls", {"creations": grants})
        listed = admin.admin("describeAcls", {"filter": {"resourceType": 2, "resourceName": topic, "resourcePatternType": 1,
                                                         "principal": "User:alice", "host": None, "operation": 1,
                                                         "permissionType": 1}})
        ops = {a["operation"] for r in listed for a in r["acls"]}
        assert ops == {4, 3, 8}, listed
    assert alice.produce(topic, msgs, chunk=10) == list(range(50))
    assert [g.value for g in alice.consume(topic, 50)] == [m.value for m in msgs]

    if client == "kafkajs":
        deleted = admin.admin("deleteAcls", {"filters": [_acl(client, "User:alice", "TOPIC", topic, "WRITE")]})
        assert sum(len(r["matchingAcls"]) for r in deleted["filterResponses"]) == 1, deleted
    else:
        deleted = admin.admin("deleteAcls", {"filters": [_acl(client, "User:alice", "TOPIC", topic, "WRITE")]})
        assert len(deleted) == 1, deleted
    with pytest.raises(NodeError) as denied_again:
        alice.produce(topic, msgs[:1])
    assert "TOPIC_AUTHORIZATION_FAILED" in denied_again.value.text() or "authoriz" in denied_again.value.text().lower()
