"""rest.proxy.auth=basic on a broker with ACLs: callers give HTTP Basic credentials of a SASL
user, every Kafka request the proxy makes for them carries User:<name>, so the broker's ACLs
decide; wrong credentials get 401. ACLs themselves are managed through /v3/clusters/{c}/acls."""

from __future__ import annotations

import base64

import pytest

from testkit.acl import USERS, acl_config
from tests.restproxy.conftest import Proxy
from trafka.testing import TrafkaBroker


@pytest.fixture
def guarded(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", config=acl_config(**{"rest.proxy.auth": "basic"})) as broker:
        yield broker


def as_user(broker, user: str) -> Proxy:
    return Proxy(broker.rest_proxy_url, auth=(user, USERS[user]))


def record(text: str) -> dict:
    return {"value": {"type": "BINARY", "data": base64.b64encode(text.encode()).decode()}}


def test_wrong_or_missing_credentials_get_401(guarded):
    url = guarded.rest_proxy_url.rstrip("/")
    for auth in (None, ("alice", "wrong"), ("nobody", "x"), ("admin", "alice-secret")):
        answer = Proxy(url, auth=auth).get("/v3/clusters")
        assert answer.status_code == 401, auth
        assert answer.json() == {"error_code": 401, "message": "Unauthorized"}
        assert answer.headers["WWW-Authenticate"] == 'Basic realm="trafka REST proxy"'
        assert Proxy(url, auth=auth).get("/topics").headers["content-type"] == "application/vnd.kafka.v2+json"
    assert Proxy(url, auth=("alice", "alice-secret")).get("/v3/clusters").status_code == 200


def test_acls_decide_what_each_user_may_write(guarded):
    admin, alice = as_user(guarded, "admin"), as_user(guarded, "alice")
    admin.create_topic("ledger", 2)
    admin.create_topic("other")
    assert "ledger" not in alice.get("/topics").json()  # no DESCRIBE: Metadata hides it

    for _ in range(3):
        refused = alice.produce("ledger", [record("a"), record("b")])
        assert [r["error_code"] for r in refused] == [40301, 40301]
        v2 = alice.v2_produce("/topics/ledger", "binary", {"records": [{"value": "aGk="}] * 50})
        assert v2.status_code == 403 and v2.json()["error_code"] == 40301
    cant_grant = alice.post(f"{alice.cluster}/acls", json={
        "resource_type": "TOPIC", "resource_name": "ledger", "pattern_type": "LITERAL", "principal": "User:alice",
        "host": "*", "operation": "WRITE", "permission": "ALLOW"})
    assert cant_grant.status_code == 403 and cant_grant.json()["error_code"] == 40301
    assert admin.end_offsets("ledger", 2) == [0, 0]

    describe = {"resource_type": "TOPIC", "resource_name": "ledger", "pattern_type": "LITERAL",
                "principal": "User:alice", "host": "*", "operation": "DESCRIBE", "permission": "ALLOW"}
    assert admin.post(f"{admin.cluster}/acls", json=describe).status_code == 201
    assert "ledger" in alice.get("/topics").json()
    seen = alice.get(f"{alice.cluster}/topics/ledger", params={"include_authorized_operations": "true"}).json()
    assert seen["authorized_operations"] == ["DESCRIBE"]
    assert alice.get(f"{alice.cluster}/topics/ledger").json()["authorized_operations"] == []
    still = alice.produce("ledger", [record("c")])
    assert still[0]["error_code"] == 40301 and "ledger" in still[0]["message"]
    assert admin.end_offsets("ledger", 2) == [0, 0]

    write = dict(describe, operation="WRITE")
    bob_too = dict(write, principal="User:bob", resource_name="ledg", pattern_type="PREFIXED")
    assert admin.post(f"{admin.cluster}/acls:batch", json={"data": [write, bob_too]}).status_code == 201
    written = alice.produce("ledger", [record(f"r{i}") for i in range(500)])
    assert {w["error_code"] for w in written} == {200}
    v2 = alice.v2_produce("/topics/ledger/partitions/1", "binary", {"records": [{"value": "aGk="}] * 500})
    assert v2.status_code == 200 and {o["error_code"] for o in v2.json()["offsets"]} == {None}
    assert sum(admin.end_offsets("ledger", 2)) == 1000
    assert as_user(guarded, "bob").produce("ledger", [record("bob")])[0]["error_code"] == 200  # WRITE implies DESCRIBE
    assert as_user(guarded, "bob").produce("other", [record("bob")])[0]["error_code"] == 40301

    listed = admin.get(f"{admin.cluster}/acls", params={"principal": "User:alice"}).json()
    assert listed["kind"] == "KafkaAclList"
    assert sorted(a["operation"] for a in listed["data"]) == ["DESCRIBE", "WRITE"]
    acl = next(a for a in listed["data"] if a["operation"] == "WRITE")
    assert {k: acl[k] for k in ("kind", "resource_type", "resource_name", "pattern_type", "principal", "host", "permission")} == \
        {"kind": "KafkaAcl", "resource_type": "TOPIC", "resource_name": "ledger", "pattern_type": "LITERAL",
         "principal": "User:alice", "host": "*", "permission": "ALLOW"}
    prefixed = admin.get(f"{admin.cluster}/acls", params={"pattern_type": "PREFIXED"}).json()["data"]
    assert [(a["principal"], a["resource_name"]) for a in prefixed] == [("User:bob", "ledg")]

    deleted = admin.delete(f"{admin.cluster}/acls", params={"principal": "User:alice", "operation": "WRITE",
                                                            "resource_type": "TOPIC"})
    assert deleted.status_code == 200 and [a["operation"] for a in deleted.json()["data"]] == ["WRITE"]
    assert alice.produce("ledger", [record("late")])[0]["error_code"] == 40301
    assert sum(admin.end_offsets("ledger", 2)) == 1001

    bad = admin.post(f"{admin.cluster}/acls", json=dict(describe, operation="SHOUT"))
    assert bad.status_code == 400


def test_v2_consumers_read_only_what_acls_allow_and_say_why_not(guarded):
    """A v2 consumer instance reads as its creator: without READ on the group, or on the topic,
    a read answers 403/40301 (it never comes back empty as if there were nothing to read); once
    an ACL made over HTTP allows both, every record written is read."""
    admin, alice = as_user(guarded, "admin"), as_user(guarded, "alice")
    admin.create_topic("payroll", 1)
    assert {w["error_code"] for w in admin.produce("payroll", [record(f"p{i}") for i in range(500)])} == {200}
    v2 = {"Content-Type": "application/vnd.kafka.v2+json"}
    binary = {"Accept": "application/vnd.kafka.binary.v2+json"}
    created = alice.post("/consumers/clerks", json={"name": "c1", "auto.offset.reset": "earliest"}, headers=v2)
    assert created.status_code == 200, created.text
    path = "/consumers/clerks/instances/c1"
    assert alice.post(f"{path}/assignments", json={"partitions": [{"topic": "payroll", "partition": 0}]},
                      headers=v2).status_code == 204

    def grant(resource_type: str, name: str) -> None:
        acl = {"resource_type": resource_type, "resource_name": name, "pattern_type": "LITERAL",
               "principal": "User:alice", "host": "*", "operation": "READ", "permission": "ALLOW"}
        assert admin.post(f"{admin.cluster}/acls", json=acl).status_code == 201

    refused = alice.get(f"{path}/records?timeout=500", headers=binary)  # no READ on the group
    assert refused.status_code == 403 and refused.json()["error_code"] == 40301, refused.text
    grant("GROUP", "clerks")
    refused = alice.get(f"{path}/records?timeout=500", headers=binary)  # no READ on the topic
    assert refused.status_code == 403 and refused.json()["error_code"] == 40301, refused.text
    grant("TOPIC", "payroll")
    found = []
    for _ in range(50):
        if len(found) >= 500:
            break
        answer = alice.get(f"{path}/records?timeout=1000", headers=binary)
        assert answer.status_code == 200, answer.text
        found += answer.json()
    assert [base64.b64decode(r["value"]).decode() for r in found] == [f"p{i}" for i in range(500)]
    assert alice.delete(path).status_code == 204
