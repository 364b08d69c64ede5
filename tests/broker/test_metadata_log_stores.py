"""Every store of cluster metadata lives in the metadata log (docs/metadata-log.md): what real
clients set (ACLs, SCRAM users, client quotas, BROKER/GROUP/CLIENT_METRICS configs, feature
levels, producer-id blocks) survives a kill -9 of the broker, `trafka metadata` prints it from
disk without the secrets, and a data dir of the previous version (the JSON files) is imported
once at its first start."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import pytest
from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient,
                                   AlterConfigOpType, ConfigEntry, ConfigResource, ResourcePatternType, ResourceType,
                                   ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion)

from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient

AUTHORIZER = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "super.users": "User:ANONYMOUS"}
SET = 0


def _admin(broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap_servers})


def _done(futures) -> None:
    for future in (futures.values() if isinstance(futures, dict) else futures):
        future.result(20)


def _acls(admin) -> set:
    found = admin.describe_acls(AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                                                 AclOperation.ANY, AclPermissionType.ANY)).result(20)
    return {(b.restype.name, b.name, b.resource_pattern_type.name, b.principal, b.operation.name,
             b.permission_type.name) for b in found}


def _configs(admin, restype, name: str) -> dict:
    (future,) = admin.describe_configs([ConfigResource(restype, name)]).values()
    return {k: e.value for k, e in future.result(20).items() if not e.is_default}


def _raw_state(raw: RawClient) -> dict:
    versions = raw.request(18, 4, {"client_software_name": "t", "client_software_version": "1"})
    quotas = raw.request(48, 1, {"strict": False, "components": [{"entity_type": "user", "match_type": 2,
                                                                   "match": None}]})
    metrics = raw.request(32, 4, {"resources": [{"resource_type": 16, "resource_name": "all-producers",
                                                 "configuration_keys": None}],
                                  "include_synonyms": False, "include_documentation": False})
    return {
        "features": ({f.name: f.max_version_level for f in versions.finalized_features},
                     versions.finalized_features_epoch),
        "quotas": {tuple((e.entity_type, e.entity_name) for e in entry.entity): {v.key: v.value for v in entry["values"]}
                   for entry in quotas.entries},
        "client-metrics": {c.name: c.value for c in metrics.results[0].configs},
    }


def _producer_id(raw: RawClient) -> int:
    body = raw.request(22, 4, {"transactional_id": None, "transaction_timeout_ms": 60000,
                               "producer_id": -1, "producer_epoch": -1})
    assert body.error_code == 0
    return body.producer_id


def _change_everything(broker) -> None:
    admin = _admin(broker)
    _done(admin.create_acls([AclBinding(ResourceType.TOPIC, "orders", ResourcePatternType.PREFIXED, "User:alice",
                                        "*", AclOperation.READ, AclPermissionType.ALLOW)]))
    _done(admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
        "alice", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"alice-secret-password", b"salt-of-alice")]))
    _done(admin.incremental_alter_configs([
        ConfigResource(ResourceType.BROKER, "0", incremental_configs=[
            ConfigEntry("message.max.bytes", "2000000", incremental_operation=AlterConfigOpType.SET)]),
        ConfigResource(ResourceType.GROUP, "orders-group", incremental_configs=[
            ConfigEntry("consumer.session.timeout.ms", "50000", incremental_operation=AlterConfigOpType.SET)])]))
    with RawClient(broker.bootstrap_servers) as raw:
        altered = raw.request(49, 1, {"validate_only": False, "entries": [
            {"entity": [{"entity_type": "user", "entity_name": "alice"}],
             "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}]}]})
        assert [e.error_code for e in altered.entries] == [0]
        subscribed = raw.request(44, 1, {"validate_only": False, "resources": [
            {"resource_type": 16, "resource_name": "all-producers", "configs": [
                {"name": "metrics", "config_operation": SET, "value": "org.apache.kafka.producer."},
                {"name": "interval.ms", "config_operation": SET, "value": "60000"}]}]})
        assert [r.error_code for r in subscribed.responses] == [0]
        updated = raw.request(57, 1, {"timeout_ms": 5000, "validate_only": False, "feature_updates": [
            {"feature": "transaction.version", "max_version_level": 1, "upgrade_type": 2, "allow_downgrade": True}]})
        assert updated.error_code == 0


def _state(broker, user: str = "alice") -> dict:
    admin = _admin(broker)
    (described,) = admin.describe_user_scram_credentials([user]).values()
    with RawClient(broker.bootstrap_servers) as raw:
        state = _raw_state(raw)
    return {**state, "acls": _acls(admin),
            "scram": [(i.mechanism.name, i.iterations) for i in described.result(20).scram_credential_infos],
            "broker": _configs(admin, ResourceType.BROKER, "0").get("message.max.bytes"),
            "group": _configs(admin, ResourceType.GROUP, "orders-group").get("consumer.session.timeout.ms")}


def test_every_store_survives_a_kill_and_trafka_metadata_prints_it(tmp_path):
    broker = TrafkaBroker(data_dir=tmp_path / "data", config=AUTHORIZER)
    broker.start()
    try:
        _change_everything(broker)
        with RawClient(broker.bootstrap_servers) as raw:
            first_id = _producer_id(raw)
        before = _state(broker)
        assert before["acls"] == {("TOPIC", "orders", "PREFIXED", "User:alice", "READ", "ALLOW")}
        assert before["scram"] == [("SCRAM_SHA_256", 4096)]
        assert (before["broker"], before["group"]) == ("2000000", "50000")
        assert before["quotas"] == {(("user", "alice"),): {"producer_byte_rate": 1024.0}}
        assert before["client-metrics"]["interval.ms"] == "60000"
        assert before["features"][0]["transaction.version"] == 1
        broker.restart(kill=True)
        assert _state(broker) == before
        assert not [t for t in _admin(broker).list_topics(timeout=10).topics if "metadata" in t]  # not a topic
        with RawClient(broker.bootstrap_servers) as raw:
            assert _producer_id(raw) >= first_id + 1000  # a new block: no id handed out twice
    finally:
        broker.stop()
    shown = subprocess.run([sys.executable, "-m", "trafka", "metadata", "--data-dir", str(tmp_path / "data")],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    for line in ("transaction.version=1", "next block starts at 2000", "user=alice: producer_byte_rate=1024",
                 "BROKER 0: message.max.bytes=2000000", "GROUP orders-group: consumer.session.timeout.ms=50000",
                 "CLIENT_METRICS all-producers: interval.ms=60000",
                 "ALLOW User:alice from * READ on TOPIC:PREFIXED:orders", "alice SCRAM-SHA-256 (4096 iterations)",
                 "BROKER <cluster default>: min.insync.replicas=1"):
        assert line in out, out
    assert base64.b64encode(b"salt-of-alice").decode() not in out and "stored_key" not in out


def _write_old_data_dir(data) -> None:
    """Files as the previous trafka wrote them."""
    data.mkdir()
    (data / "producer_ids").write_text("7000\n")
    (data / "finalized_features").write_text(json.dumps({"epoch": 4, "levels": {"transaction.version": 1}}))
    (data / "client_quotas").write_text(json.dumps([{"entity": [["user", "bob"]],
                                                     "values": {"consumer_byte_rate": 2048.0}}]))
    (data / "group_configs").write_text(json.dumps({"old-group": {"consumer.session.timeout.ms": "55000"}}))
    (data / "client_metrics").write_text(json.dumps({"all-producers": {"metrics": "*", "interval.ms": "120000"}}))
    (data / "broker_configs").write_text(json.dumps({"": {"min.insync.replicas": "1"},
                                                     "0": {"message.max.bytes": "3000000"}}))
    (data / "acls.json").write_text(json.dumps([{
        "resource_type": "GROUP", "resource_name": "old-group", "pattern_type": "LITERAL", "principal": "User:bob",
        "host": "*", "operation": "READ", "permission_type": "ALLOW"}]))
    salt, key = base64.b64encode(b"bob-salt").decode(), base64.b64encode(b"k" * 32).decode()
    (data / "scram_credentials.json").write_text(json.dumps({"bob": {"SCRAM-SHA-512": {
        "salt": salt, "stored_key": key, "server_key": key, "iterations": 8192}}}))


def test_a_data_dir_of_the_previous_version_is_imported_once(tmp_path):
    data = tmp_path / "data"
    _write_old_data_dir(data)
    names = sorted(p.name for p in data.iterdir())
    broker = TrafkaBroker(data_dir=data, config=AUTHORIZER)
    broker.start()
    try:
        state = _state(broker, "bob")
        assert state["acls"] == {("GROUP", "old-group", "LITERAL", "User:bob", "READ", "ALLOW")}
        assert state["broker"] == "3000000"
        assert _configs(_admin(broker), ResourceType.GROUP, "old-group") == {"consumer.session.timeout.ms": "55000"}
        assert state["quotas"] == {(("user", "bob"),): {"consumer_byte_rate": 2048.0}}
        assert state["features"] == ({**state["features"][0], "transaction.version": 1}, 4)
        assert state["scram"] == [("SCRAM_SHA_512", 8192)]
        with RawClient(broker.bootstrap_servers) as raw:
            assert _producer_id(raw) == 7000
            assert _raw_state(raw)["client-metrics"]["interval.ms"] == "120000"
    finally:
        broker.stop()
    assert all(not (data / name).exists() and (data / f"{name}.migrated").exists() for name in names)
    # A file put back later is ignored: the log holds the state.
    (data / "acls.json").write_text("[]")
    broker.start()
    try:
        assert _acls(_admin(broker)) == {("GROUP", "old-group", "LITERAL", "User:bob", "READ", "ALLOW")}
        assert "ignoring" in broker.log_text() and "acls.json" in broker.log_text()
    finally:
        broker.stop()


@pytest.mark.parametrize("damage", ["snapshot", "record"])
def test_a_damaged_metadata_log_stops_the_start_with_one_line(tmp_path, damage):
    from trafka.storage.metadata_log import MetadataLog, metadata_log_dir

    data = tmp_path / "data"
    broker = TrafkaBroker(data_dir=data, config=AUTHORIZER)
    broker.start()
    _change_everything(broker)
    broker.stop()
    log = MetadataLog(data)
    if damage == "snapshot":
        path = log.write_snapshot([(b"k", b"v")])
        log.close()
        path.write_bytes(path.read_bytes()[:-5] + b"XXXXX")
    else:  # a whole, CRC-correct batch whose record this trafka cannot read
        log.append([(b'{"type": "ConfigRecord", "version": 99, "entity": []}', b"{}")])
        log.close()
    result = subprocess.run([sys.executable, "-m", "trafka", "serve", "--port", "0", "--data-dir", str(data)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert str(metadata_log_dir(data)) in result.stderr, result.stderr
    assert ("unreadable metadata records" if damage == "snapshot" else "written by a newer trafka") in result.stderr


def test_describe_quorum_answers_the_metadata_logs_end_as_its_high_watermark(trafka_broker):
    """DescribeQuorum's high watermark is the metadata log's end: each change a client makes
    (one AlterConfigs of two configs: one batch of two records) moves it, and it survives a
    restart, as a KRaft quorum's does."""
    from kafka import KafkaAdminClient

    def quorum() -> tuple[int, list[int]]:
        admin = KafkaAdminClient(bootstrap_servers=trafka_broker.bootstrap_servers)
        try:
            (topic,) = admin.describe_metadata_quorum()["topics"]
        finally:
            admin.close()
        (partition,) = topic["partitions"]
        return partition["high_watermark"], [v["log_end_offset"] for v in partition["current_voters"]]

    before, voters = quorum()
    assert voters == [before]
    admin = _admin(trafka_broker)
    _done(admin.incremental_alter_configs([ConfigResource(ResourceType.BROKER, "0", incremental_configs=[
        ConfigEntry("message.max.bytes", "2000000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("log.retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET)])]))
    after, voters = quorum()
    assert after == before + 2 and voters == [after]
    trafka_broker.restart()
    assert quorum() == (after, [after])
