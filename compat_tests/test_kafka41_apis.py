"""Kafka 4.1's remaining single-node APIs from real clients' admin and consumer code: features
(describe/update), client quotas, ListConfigResources, delegation tokens (refused on PLAINTEXT)
and OffsetForLeaderEpoch (the Java consumer's position validation, KIP-320).

Tests that change the finalized features or quotas use a broker of their own (`trafka_broker`),
so the shared session broker keeps Kafka 4.1's defaults."""

from __future__ import annotations

import uuid

import pytest

from compat_tests.conftest import make_topic
from testkit.java import KafkaJavaError, _jiter


def _features(java, admin) -> tuple[dict, dict, int]:
    call = java.call
    described = call(call(admin.j.describeFeatures).featureMetadata)
    meta = call(described.get)
    finalized = {name: (r.minVersionLevel(), r.maxVersionLevel()) for name, r in meta.finalizedFeatures().items()}
    supported = {name: (r.minVersion(), r.maxVersion()) for name, r in meta.supportedFeatures().items()}
    epoch = meta.finalizedFeaturesEpoch()
    return finalized, supported, (epoch.get() if epoch.isPresent() else None)


def _update(java, admin, updates: dict, *, validate_only: bool = False):
    jvm, call = java.jvm, java.call
    kinds = jvm.org.apache.kafka.clients.admin.FeatureUpdate.UpgradeType
    changes = jvm.java.util.HashMap()
    for name, (level, kind) in updates.items():
        changes.put(name, jvm.org.apache.kafka.clients.admin.FeatureUpdate(int(level), getattr(kinds, kind)))
    options = jvm.org.apache.kafka.clients.admin.UpdateFeaturesOptions().validateOnly(validate_only)
    return call(call(call(admin.j.updateFeatures, changes, options).all).get)


@pytest.mark.compat("admin-features")
@pytest.mark.compat_client("java-4.3.0")
def test_java_describe_and_update_features(java_client_43, trafka_broker):
    java = java_client_43
    admin = java.make_admin({"bootstrap.servers": trafka_broker.bootstrap_servers})
    finalized, supported, epoch = _features(java, admin)
    assert finalized == {"metadata.version": (27, 27), "group.version": (1, 1), "transaction.version": (2, 2)}
    assert supported == {"metadata.version": (7, 27), "group.version": (0, 1), "transaction.version": (0, 2)}
    with pytest.raises(KafkaJavaError) as refused:
        _update(java, admin, {"metadata.version": (26, "SAFE_DOWNGRADE")})
    assert refused.value.simple_name == "InvalidUpdateVersionException"
    assert "Refusing to perform the requested downgrade" in refused.value.message
    with pytest.raises(KafkaJavaError) as refused:
        _update(java, admin, {"transaction.version": (3, "UPGRADE")})
    assert refused.value.simple_name == "InvalidUpdateVersionException"
    _update(java, admin, {"group.version": (0, "SAFE_DOWNGRADE")}, validate_only=True)
    assert _features(java, admin)[0] == finalized
    _update(java, admin, {"group.version": (0, "SAFE_DOWNGRADE")})
    after, _, new_epoch = _features(java, admin)
    assert after == {"metadata.version": (27, 27), "transaction.version": (2, 2)} and new_epoch == epoch + 1
    _update(java, admin, {"group.version": (1, "UPGRADE")})
    assert _features(java, admin)[0] == finalized


@pytest.mark.compat("admin-features")
@pytest.mark.compat_client("kafka-python")
def test_kafka_python_describe_and_update_features(trafka_broker):
    from kafka import KafkaAdminClient
    from kafka.errors import InvalidUpdateVersionError

    admin = KafkaAdminClient(bootstrap_servers=trafka_broker.bootstrap_servers)
    try:
        described = admin.describe_features()
        assert {name: f.get("finalized") for name, f in described.items()} == {
            "metadata.version": (27, 27), "group.version": (1, 1), "transaction.version": (2, 2)}
        assert {name: f["supported"] for name, f in described.items()} == {
            "metadata.version": (7, 27), "group.version": (0, 1), "transaction.version": (0, 2)}
        with pytest.raises(InvalidUpdateVersionError):
            admin.update_features({"metadata.version": ("SAFE_DOWNGRADE", 20)})
        assert admin.update_features({"group.version": ("SAFE_DOWNGRADE", 0)}, validate_only=True) == {"group.version": "OK"}
        assert admin.describe_features() == described
        assert admin.update_features({"group.version": ("SAFE_DOWNGRADE", 0)}) == {"group.version": "OK"}
        after = admin.describe_features()
        assert "finalized" not in after["group.version"]
        assert after["metadata.version"]["finalized_epoch"] == described["metadata.version"]["finalized_epoch"] + 1
    finally:
        admin.close()


@pytest.mark.compat("admin-quotas")
@pytest.mark.compat_client("java-4.3.0")
def test_java_client_quotas(java_client_43, trafka_broker):
    java = java_client_43
    jvm, call = java.jvm, java.call
    admin = java.make_admin({"bootstrap.servers": trafka_broker.bootstrap_servers})
    quota = jvm.org.apache.kafka.common.quota

    def entity(**names):
        m = jvm.java.util.HashMap()
        for k, v in names.items():
            m.put(k.replace("_", "-"), v)
        return quota.ClientQuotaEntity(m)

    def alteration(ent, **values):
        ops = jvm.java.util.ArrayList()
        for k, v in values.items():
            ops.add(quota.ClientQuotaAlteration.Op(k, None if v is None else float(v)))
        return quota.ClientQuotaAlteration(ent, ops)

    def alter(*alterations):
        lst = jvm.java.util.ArrayList()
        for a in alterations:
            lst.add(a)
        call(call(call(admin.j.alterClientQuotas, lst).all).get)

    def describe(flt) -> dict:
        found = call(call(call(admin.j.describeClientQuotas, flt).entities).get)
        return {
            tuple(sorted((k, v) for k, v in ent.entries().items())): dict(values.items())
            for ent, values in found.items()
        }

    alter(alteration(entity(user="alice"), producer_byte_rate=1048576, request_percentage=25.0),
          alteration(entity(user="alice", client_id="app"), consumer_byte_rate=2048))
    with pytest.raises(KafkaJavaError) as refused:
        alter(alteration(entity(user="bob"), producer_byte_rate=1.5))
    assert refused.value.simple_name == "InvalidRequestException"
    assert describe(quota.ClientQuotaFilter.all()) == {
        (("user", "alice"),): {"producer_byte_rate": 1048576.0, "request_percentage": 25.0},
        (("client-id", "app"), ("user", "alice")): {"consumer_byte_rate": 2048.0},
    }
    components = jvm.java.util.ArrayList()
    components.add(quota.ClientQuotaFilterComponent.ofEntity("user", "alice"))
    assert list(describe(quota.ClientQuotaFilter.containsOnly(components))) == [(("user", "alice"),)]
    alter(alteration(entity(user="alice"), request_percentage=None))
    assert describe(quota.ClientQuotaFilter.containsOnly(components)) == {(("user", "alice"),): {"producer_byte_rate": 1048576.0}}
    trafka_broker.restart()
    admin = java.make_admin({"bootstrap.servers": trafka_broker.bootstrap_servers})
    assert describe(quota.ClientQuotaFilter.containsOnly(components)) == {(("user", "alice"),): {"producer_byte_rate": 1048576.0}}


@pytest.mark.compat("admin-config-resources")
@pytest.mark.compat_client("java-4.3.0")
def test_java_list_config_resources(java_client_43, bootstrap):
    java = java_client_43
    jvm, call = java.jvm, java.call
    topic = make_topic(bootstrap, f"j-cfg-{uuid.uuid4().hex[:8]}")
    admin = java.make_admin({"bootstrap.servers": bootstrap})
    listed = call(call(call(admin.j.listConfigResources).all).get)
    found = {(r.type().toString(), r.name()) for r in _jiter(listed)}
    assert {("BROKER", "0"), ("BROKER_LOGGER", "0"), ("TOPIC", topic)} <= found
    types = jvm.java.util.HashSet()
    types.add(jvm.org.apache.kafka.common.config.ConfigResource.Type.TOPIC)
    options = jvm.org.apache.kafka.clients.admin.ListConfigResourcesOptions()
    only_topics = call(call(call(admin.j.listConfigResources, types, options).all).get)
    assert {r.type().toString() for r in _jiter(only_topics)} == {"TOPIC"}


@pytest.mark.compat("admin-config-resources")
@pytest.mark.compat_client("kafka-python")
def test_kafka_python_list_config_resources(bootstrap):
    from kafka import KafkaAdminClient

    topic = make_topic(bootstrap, f"kp-cfg-{uuid.uuid4().hex[:8]}")
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        listed = admin.list_config_resources()
        only_topics = admin.list_config_resources(["TOPIC"])
    finally:
        admin.close()
    assert listed["broker"] == ["0"] and listed["broker_logger"] == ["0"]
    assert topic in listed["topic"]
    assert set(only_topics) == {"topic"}


@pytest.mark.compat_client("java-4.3.0")
def test_java_delegation_tokens_are_refused_on_plaintext(java_client_43, bootstrap):
    """Kafka refuses token requests on PLAINTEXT connections (and answers AUTH_DISABLED on
    authenticated ones, as no delegation.token.secret.key is set)."""
    java = java_client_43
    call = java.call
    admin = java.make_admin({"bootstrap.servers": bootstrap})
    with pytest.raises(KafkaJavaError) as refused:
        call(call(call(admin.j.createDelegationToken).delegationToken).get)
    assert refused.value.simple_name == "UnsupportedByAuthenticationException"
    with pytest.raises(KafkaJavaError) as refused:
        call(call(call(admin.j.describeDelegationToken).delegationTokens).get)
    assert refused.value.simple_name == "UnsupportedByAuthenticationException"


@pytest.mark.compat_client("java-4.3.0")
def test_java_consumer_validates_its_position_with_offset_for_leader_epoch(java_client_43, bootstrap):
    """A position with a leader epoch (a seek to an OffsetAndMetadata carrying one) is checked
    with OffsetForLeaderEpoch before fetching (KIP-320). Epoch 0 ends at the log end offset, so
    the position stands; an epoch this broker never had is unknown (-1/-1), which the consumer
    treats as truncation and resets by auto.offset.reset (earliest)."""
    java = java_client_43
    jvm, call = java.jvm, java.call
    topic = make_topic(bootstrap, f"j-epoch-{uuid.uuid4().hex[:8]}")
    producer = java.make_producer({"bootstrap.servers": bootstrap})
    for i in range(10):
        producer.send(topic, value=f"v{i}".encode(), partition=0)
    producer.close()

    def first_offset_after_seek(epoch: int) -> int:
        consumer = java.make_consumer({"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest"})
        consumer.assign([(topic, 0)])
        position = jvm.org.apache.kafka.clients.consumer.OffsetAndMetadata(5, jvm.java.util.Optional.of(epoch), "")
        call(consumer.j.seek, java.tp(topic, 0), position)
        records = consumer.poll_until(1, timeout_s=30)
        consumer.close()
        return records[0].offset

    assert first_offset_after_seek(0) == 5
    assert first_offset_after_seek(7) == 0


@pytest.mark.compat_client("java-4.3.0")
def test_java_delegation_tokens_are_disabled_on_sasl(java_client_43, tmp_path):
    """On an authenticated (SASL) connection Kafka without delegation.token.secret.key answers
    DELEGATION_TOKEN_AUTH_DISABLED, which the Java Admin raises as DelegationTokenDisabledException."""
    from trafka.testing import TrafkaBroker

    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";'
    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN", "sasl.jaas.config": jaas}
    with TrafkaBroker(data_dir=tmp_path / "data", config=config, in_process=True) as broker:
        java = java_client_43
        call = java.call
        admin = java.make_admin({
            "bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                                'username="alice" password="alice-secret";',
        })
        with pytest.raises(KafkaJavaError) as refused:
            call(call(call(admin.j.createDelegationToken).delegationToken).get)
        assert refused.value.simple_name == "DelegationTokenDisabledException"
        with pytest.raises(KafkaJavaError) as refused:
            call(call(call(admin.j.describeDelegationToken).delegationTokens).get)
        assert refused.value.simple_name == "DelegationTokenDisabledException"
        admin.close()
