"""CreateAcls / DescribeAcls / DeleteAcls v1-3 on the raw wire: every served version, Kafka's
INVALID_REQUEST for bad bindings and filters (one by one), MATCH and ANY filters, a refused
caller, and an unreadable acls.json stopping the start with one line."""

from __future__ import annotations

import subprocess
import sys

import pytest
from testkit.acl import acl_broker, allow, confluent_admin, unique

from trafka.testing.rawwire import RawClient

TOPIC, GROUP, CLUSTER = 2, 3, 4
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
OP_ANY, OP_ALL, READ, WRITE, DESCRIBE = 1, 2, 3, 4, 8
DENY, ALLOW = 2, 3
INVALID_REQUEST, CLUSTER_AUTHORIZATION_FAILED = 42, 31


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    # The PLAINTEXT listener's User:ANONYMOUS is a super user here: the raw client needs no login.
    broker = acl_broker(tmp_path_factory.mktemp("acl-wire") / "data", **{"super.users": "User:admin;User:ANONYMOUS"})
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def _creation(rtype, name, pattern, principal, operation, permission=ALLOW, host="*") -> dict:
    return {"resource_type": rtype, "resource_name": name, "resource_pattern_type": pattern, "principal": principal,
            "host": host, "operation": operation, "permission_type": permission}


def _filter(rtype=1, name=None, pattern=ANY, principal=None, operation=OP_ANY, permission=1) -> dict:
    return {"resource_type_filter": rtype, "resource_name_filter": name, "pattern_type_filter": pattern,
            "principal_filter": principal, "host_filter": None, "operation": operation, "permission_type": permission}


@pytest.mark.parametrize("version", [1, 2, 3])
def test_every_served_version_creates_describes_and_deletes(broker, version):
    name = unique(f"v{version}")
    with RawClient(broker.bootstrap("PLAINTEXT")) as raw:
        created = raw.request(30, version, {"creations": [
            _creation(TOPIC, name, PREFIXED, "User:alice", READ),
            _creation(TOPIC, name + "-x", LITERAL, "User:alice", WRITE, DENY, host="10.0.0.1"),
            _creation(GROUP, name, LITERAL, "User:*", OP_ALL),
        ]})
        assert [r.error_code for r in created.results] == [0, 0, 0]

        described = raw.request(29, version, _filter(TOPIC, name + "-x", MATCH))
        assert described.error_code == 0
        found = {(r.resource_name, r.pattern_type, a.principal, a.host, a.operation, a.permission_type)
                 for r in described.resources for a in r.acls}
        assert found == {(name, PREFIXED, "User:alice", "*", READ, ALLOW),
                         (name + "-x", LITERAL, "User:alice", "10.0.0.1", WRITE, DENY)}
        # ANY with a name: that exact name only; a LITERAL filter does not see the PREFIXED pattern.
        assert [r.resource_name for r in raw.request(29, version, _filter(1, name, ANY)).resources] == [name, name]
        assert raw.request(29, version, _filter(TOPIC, name, LITERAL)).resources == []

        deleted = raw.request(31, version, {"filters": [_filter(1, None, ANY, "User:*"), _filter(TOPIC, name + "-x", MATCH)]})
        assert [f.error_code for f in deleted.filter_results] == [0, 0]
        assert [(m.resource_type, m.resource_name) for m in deleted.filter_results[0].matching_acls] == [(GROUP, name)]
        assert {m.resource_name for m in deleted.filter_results[1].matching_acls} == {name, name + "-x"}
        assert raw.request(29, version, _filter(1, name, MATCH)).resources == []


@pytest.mark.parametrize("bad,words", [
    (_creation(TOPIC, "t", MATCH, "User:a", READ), "Invalid patternType MATCH"),
    (_creation(TOPIC, "t", ANY, "User:a", READ), "Invalid patternType ANY"),
    (_creation(1, "t", LITERAL, "User:a", READ), "Invalid resourceType ANY"),
    (_creation(TOPIC, "t", LITERAL, "User:a", OP_ANY), "Invalid operation ANY"),
    (_creation(TOPIC, "t", LITERAL, "User:a", READ, permission=1), "Invalid permissionType ANY"),
    (_creation(TOPIC, "", LITERAL, "User:a", READ), "empty resource name"),
    (_creation(CLUSTER, "my-cluster", LITERAL, "User:a", READ), "kafka-cluster"),
    (_creation(TOPIC, "t", LITERAL, "alice", READ), "Could not parse principal"),
    (_creation(99, "t", LITERAL, "User:a", READ), "Invalid ACL"),
    (_creation(TOPIC, "t", LITERAL, "User:a", READ, host="10.0.0.0/33"), "Invalid CIDR pattern"),
])
def test_bad_bindings_are_invalid_request_one_by_one(broker, bad, words):
    good = _creation(TOPIC, unique("good"), LITERAL, "User:a", READ)
    with RawClient(broker.bootstrap("PLAINTEXT")) as raw:
        results = raw.request(30, 3, {"creations": [bad, good]}).results
    assert results[0].error_code == INVALID_REQUEST and words in results[0].error_message
    assert results[1].error_code == 0


def test_unknown_filters_are_invalid_request(broker):
    with RawClient(broker.bootstrap("PLAINTEXT")) as raw:
        assert raw.request(29, 3, _filter(0)).error_code == INVALID_REQUEST
        deleted = raw.request(31, 3, {"filters": [_filter(TOPIC, pattern=0), _filter(TOPIC, name=unique("none"))]})
    assert [f.error_code for f in deleted.filter_results] == [INVALID_REQUEST, 0]


def test_a_caller_without_cluster_alter_is_refused(tmp_path):
    broker = acl_broker(tmp_path / "data")  # here User:ANONYMOUS is nobody special
    broker.start()
    try:
        with RawClient(broker.bootstrap("PLAINTEXT")) as raw:
            created = raw.request(30, 3, {"creations": [_creation(TOPIC, "t", LITERAL, "User:ANONYMOUS", OP_ALL)]})
            assert [r.error_code for r in created.results] == [CLUSTER_AUTHORIZATION_FAILED]
            assert raw.request(29, 3, _filter()).error_code == CLUSTER_AUTHORIZATION_FAILED
            deleted = raw.request(31, 3, {"filters": [_filter()]})
            assert [f.error_code for f in deleted.filter_results] == [CLUSTER_AUTHORIZATION_FAILED]
    finally:
        broker.stop()


def test_an_unreadable_acl_file_stops_the_start_with_one_line(tmp_path):
    """An older trafka's acls.json is imported into the metadata log at the first start; an
    unreadable one stops it."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "acls.json").write_text('[{"resource_type": "TOPIC"')
    result = subprocess.run(
        [sys.executable, "-m", "trafka", "serve", "--port", "0", "--data-dir", str(data),
         "--config", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer"],
        capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "unreadable ACL file" in result.stderr and "acls.json" in result.stderr
    assert "Traceback" not in result.stderr


def test_idempotent_init_producer_id_needs_write_on_some_topic(tmp_path):
    """Kafka's authorizeByResourceType: an undominated ALLOW WRITE anywhere is enough; a DENY of a
    prefix of it, or of the literal `*`, takes it away; IDEMPOTENT_WRITE on the cluster also does."""
    broker = acl_broker(tmp_path / "data")
    broker.start()
    init = {"transactional_id": None, "transaction_timeout_ms": 60000}
    try:
        admin = confluent_admin(broker)
        with RawClient(broker.bootstrap("PLAINTEXT")) as raw:
            assert raw.request(22, 1, init).error_code == CLUSTER_AUTHORIZATION_FAILED
            allow(admin, "User:ANONYMOUS", "TOPIC", "orders-eu", "WRITE", pattern="PREFIXED")
            assert raw.request(22, 1, init).error_code == 0
            allow(admin, "User:ANONYMOUS", "TOPIC", "orders", "WRITE", pattern="PREFIXED", permission="DENY")
            assert raw.request(22, 1, init).error_code == CLUSTER_AUTHORIZATION_FAILED
            allow(admin, "User:ANONYMOUS", "CLUSTER", "kafka-cluster", "IDEMPOTENT_WRITE")
            assert raw.request(22, 1, init).error_code == 0
    finally:
        broker.stop()


GROUP_AUTHORIZATION_FAILED = 30
_GROUP_REQUESTS = [
    (11, 1, {"group_id": "g", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "",
             "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b"x"}]}),
    (11, 7, {"group_id": "g", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "",
             "group_instance_id": None, "protocol_type": "consumer",
             "protocols": [{"name": "range", "metadata": b"x"}]}),
    (14, 5, {"group_id": "g", "generation_id": 1, "member_id": "m", "group_instance_id": None,
             "protocol_type": "consumer", "protocol_name": "range", "assignments": []}),
    (12, 4, {"group_id": "g", "generation_id": 1, "member_id": "m", "group_instance_id": None}),
    (13, 0, {"group_id": "g", "member_id": "m"}),
    (13, 5, {"group_id": "g", "members": [{"member_id": "m", "group_instance_id": None, "reason": None}]}),
]


@pytest.fixture(scope="module")
def guarded_broker(tmp_path_factory):
    """A broker where the raw client's User:ANONYMOUS has no ACLs."""
    broker = acl_broker(tmp_path_factory.mktemp("acl-guarded") / "data")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.mark.parametrize("api_key,version,body", _GROUP_REQUESTS, ids=lambda v: str(v) if not isinstance(v, dict) else "")
def test_group_requests_without_read_on_the_group(guarded_broker, api_key, version, body):
    with RawClient(guarded_broker.bootstrap("PLAINTEXT")) as raw:
        answer = raw.request(api_key, version, body)
    assert answer.error_code == GROUP_AUTHORIZATION_FAILED
    assert not getattr(answer, "members", None)
