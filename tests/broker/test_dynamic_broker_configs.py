"""Dynamic broker configs, as Kafka's `kafka-configs --entity-type brokers [--entity-default]`
sets them: IncrementalAlterConfigs and AlterConfigs on a BROKER resource (the node id, or "" for
the cluster default) with confluent-kafka's AdminClient. What trafka acts on applies without a
restart, every change is durable, the sources are Kafka's, and what Kafka refuses is refused
with INVALID_REQUEST and Kafka's reason."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource,
                                   NewTopic, ResourceType)

from trafka.testing import TrafkaBroker


_ADMINS: dict[str, AdminClient] = {}


def admin(broker) -> AdminClient:
    """One client per broker address, kept while its futures run."""
    bootstrap = broker.bootstrap_servers
    if bootstrap not in _ADMINS:
        _ADMINS[bootstrap] = AdminClient({"bootstrap.servers": bootstrap})
    return _ADMINS[bootstrap]


def set_configs(broker, name: str, values: dict[str, str | None], *, validate_only: bool = False) -> None:
    """SET each value (DELETE for None) on BROKER `name`; raises KafkaException when refused."""
    entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.DELETE if v is None else AlterConfigOpType.SET)
               for k, v in values.items()]
    resource = ConfigResource(ResourceType.BROKER, name, incremental_configs=entries)
    for future in admin(broker).incremental_alter_configs([resource], validate_only=validate_only).values():
        future.result(30)


def describe(broker, resource_type, name: str) -> dict:
    (future,) = admin(broker).describe_configs([ConfigResource(resource_type, name)]).values()
    return future.result(30)


def refused(broker, name: str, values: dict[str, str]) -> KafkaError:
    with pytest.raises(KafkaException) as caught:
        set_configs(broker, name, values)
    return caught.value.args[0]


def make_topic(broker, name: str) -> None:
    for future in admin(broker).create_topics([NewTopic(name, 1)]).values():
        future.result(30)


def test_a_per_broker_value_applies_at_once_and_survives_a_restart(tmp_path):
    """(The cluster-default entity "", which librdkafka and kafka-python cannot name, is set
    with the Java admin client in compat_tests/test_admin_calls.py.)"""
    with TrafkaBroker(tmp_path / "data") as broker:
        make_topic(broker, "dyn")
        set_configs(broker, "0", {"message.max.bytes": "2000", "log.retention.ms": "3600000"})
        entry = describe(broker, ResourceType.BROKER, "0")["message.max.bytes"]
        assert (entry.value, entry.source, entry.is_read_only) == ("2000", ConfigSource.DYNAMIC_BROKER_CONFIG.value, False)
        topic = describe(broker, ResourceType.TOPIC, "dyn")
        assert (topic["max.message.bytes"].value, topic["max.message.bytes"].source) == (
            "2000", ConfigSource.DYNAMIC_BROKER_CONFIG.value)
        assert topic["retention.ms"].value == "3600000"
        # applied without a restart: a 3000-byte record is now too large for the topic
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0, "acks": "all",
                             "compression.type": "none"})
        outcome = []
        producer.produce("dyn", b"x" * 3000, on_delivery=lambda err, msg: outcome.append(err))
        producer.flush(15)
        producer.produce("dyn", b"small", on_delivery=lambda err, msg: outcome.append(err))
        producer.flush(15)
        assert [e.code() if e else None for e in outcome] == [KafkaError.MSG_SIZE_TOO_LARGE, None]
        broker.restart()
        entry = describe(broker, ResourceType.BROKER, "0")["message.max.bytes"]
        assert (entry.value, entry.source) == ("2000", ConfigSource.DYNAMIC_BROKER_CONFIG.value)
        assert describe(broker, ResourceType.TOPIC, "dyn")["retention.ms"].value == "3600000"
        set_configs(broker, "0", {"message.max.bytes": None, "log.retention.ms": None})
        topic = describe(broker, ResourceType.TOPIC, "dyn")
        assert (topic["max.message.bytes"].value, topic["max.message.bytes"].source) == (
            "1048588", ConfigSource.DEFAULT_CONFIG.value)


def test_what_kafka_refuses_is_refused_and_changes_nothing(tmp_path):
    with TrafkaBroker(tmp_path / "data") as broker:
        static = refused(broker, "0", {"log.dirs": "/elsewhere"})
        assert static.code() == KafkaError.INVALID_REQUEST
        assert "Cannot update these configs dynamically" in static.str()
        bad_value = refused(broker, "0", {"max.connections": "lots"})
        assert bad_value.code() == KafkaError.INVALID_REQUEST and "max.connections" in bad_value.str()
        set_configs(broker, "0", {"max.connections": "50"}, validate_only=True)
        entry = describe(broker, ResourceType.BROKER, "0")["max.connections"]
        assert entry.source == ConfigSource.DEFAULT_CONFIG.value
        assert describe(broker, ResourceType.BROKER, "0")["log.dirs"].is_read_only


def test_max_connections_per_ip_applies_to_new_connections(tmp_path):
    """A connection limit set dynamically holds the next connections back, as Kafka's
    DynamicConnectionQuota does (the admin client's own connections count too)."""
    from trafka.testing.rawwire import RawClient

    def hello(raw) -> bool:
        try:
            return raw.request(18, 3, {"client_software_name": "t", "client_software_version": "1"}).error_code == 0
        except (ConnectionError, OSError, EOFError):
            return False

    with TrafkaBroker(tmp_path / "data") as broker:
        set_configs(broker, "0", {"max.connections.per.ip": "3"})
        opened = [RawClient(broker.bootstrap_servers) for _ in range(4)]
        try:
            answered = [hello(raw) for raw in opened]
        finally:
            for raw in opened:
                raw.close()
        assert answered.count(True) < 3 and answered[-1] is False, answered
        set_configs(broker, "0", {"max.connections.per.ip": None})
        opened = [RawClient(broker.bootstrap_servers) for _ in range(4)]
        try:
            assert all(hello(raw) for raw in opened)
        finally:
            for raw in opened:
                raw.close()


def test_kafka_python_describes_advertised_listeners_read_only_as_kafka_4(tmp_path):
    """Kafka 4.x (KAFKA-18405) took advertised.listeners out of the dynamic configs: kafka-python's
    describe_configs on a BROKER resource reports it read-only, while listeners and the listener
    settings Kafka reconfigures (sasl.kerberos.*) are dynamic."""
    from kafka.admin import ConfigResource as PyConfigResource, ConfigResourceType, KafkaAdminClient

    with TrafkaBroker(tmp_path / "data") as broker:
        client = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
        try:
            resource = PyConfigResource(ConfigResourceType.BROKER, "0")
            every = client.describe_configs([resource], config_filter="all")["broker"]["0"]
            dynamic = client.describe_configs([resource], config_filter="dynamic")["broker"]["0"]
        finally:
            client.close()
        assert every["advertised.listeners"]["read_only"] is True
        assert every["advertised.listeners"]["value"] == f"PLAINTEXT://{broker.bootstrap_servers}"
        assert every["listeners"]["read_only"] is False
        assert every["log.dirs"]["read_only"] is True
        assert "advertised.listeners" not in dynamic and "node.id" not in dynamic
        assert {"listeners", "sasl.kerberos.min.time.before.relogin", "ssl.keystore.location", "message.max.bytes",
                "max.connections", "num.io.threads", "sasl.login.refresh.buffer.seconds"} <= set(dynamic)


def test_listener_settings_are_accepted_and_read_only_ones_refused(tmp_path):
    """librdkafka's 0081 sets sasl.kerberos.min.time.before.relogin=58000 on a BROKER resource with
    AlterConfigs and IncrementalAlterConfigs and Kafka accepts it (a per-broker setting of
    DynamicListenerConfig); advertised.listeners is refused as Kafka 4.x refuses it, and the key
    store settings only with a listener prefix (listener.name.<listener>.ssl.*)."""
    with TrafkaBroker(tmp_path / "data") as broker:
        legacy = ConfigResource(ResourceType.BROKER, "0", set_config={"sasl.kerberos.min.time.before.relogin": "58000"})
        for future in admin(broker).alter_configs([legacy]).values():
            future.result(30)
        entry = describe(broker, ResourceType.BROKER, "0")["sasl.kerberos.min.time.before.relogin"]
        assert (entry.value, entry.source, entry.is_read_only) == ("58000", ConfigSource.DYNAMIC_BROKER_CONFIG.value, False)
        set_configs(broker, "0", {"sasl.kerberos.min.time.before.relogin": "59000",
                                  "listener.name.plaintext.ssl.keystore.type": "PEM"})
        configs = describe(broker, ResourceType.BROKER, "0")
        assert configs["sasl.kerberos.min.time.before.relogin"].value == "59000"
        prefixed = configs["listener.name.plaintext.ssl.keystore.type"]
        assert (prefixed.value, prefixed.source) == ("PEM", ConfigSource.DYNAMIC_BROKER_CONFIG.value)

        read_only = refused(broker, "0", {"advertised.listeners": "PLAINTEXT://elsewhere:9092"})
        assert read_only.code() == KafkaError.INVALID_REQUEST
        assert "Cannot update these configs dynamically" in read_only.str() and "advertised.listeners" in read_only.str()
        legacy_read_only = ConfigResource(ResourceType.BROKER, "0", set_config={"advertised.listeners": "PLAINTEXT://x:1"})
        (future,) = admin(broker).alter_configs([legacy_read_only]).values()
        with pytest.raises(KafkaException) as caught:
            future.result(30)
        assert caught.value.args[0].code() == KafkaError.INVALID_REQUEST
        unprefixed = refused(broker, "0", {"ssl.keystore.location": "/tmp/broker.p12"})
        assert unprefixed.code() == KafkaError.INVALID_REQUEST and "listener prefix" in unprefixed.str()
        bad = refused(broker, "0", {"sasl.kerberos.min.time.before.relogin": "soon"})
        assert bad.code() == KafkaError.INVALID_REQUEST
        assert describe(broker, ResourceType.BROKER, "0")["advertised.listeners"].source == ConfigSource.STATIC_BROKER_CONFIG.value


def test_configs_trafka_does_not_know_are_stored_and_described_as_kafka_does(tmp_path):
    """Kafka accepts any name on a BROKER resource (plugins such as a custom authorizer or
    metrics reporter read their own settings) and lists it in DescribeConfigs with what its
    ConfigHelper knows of a config without a type: value hidden (sensitive), type UNKNOWN,
    read-only, its own name as the synonym per dynamic level. Read raw, field by field."""
    from trafka.testing.rawwire import RawClient

    def described(raw, name: str) -> dict:
        body = {"resources": [{"resource_type": 4, "resource_name": name, "configuration_keys": None}],
                "include_synonyms": True, "include_documentation": True}
        [result] = raw.request(32, 4, body).results
        assert result.error_code == 0, result.error_message
        return {c.name: (c.value, c.config_source, c.is_sensitive, c.read_only, c.config_type, c.documentation,
                         [(s.name, s.value, s.source) for s in c.synonyms]) for c in result.configs}

    dynamic_broker, dynamic_default = ConfigSource.DYNAMIC_BROKER_CONFIG.value, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value
    with TrafkaBroker(tmp_path / "data") as broker:
        set_configs(broker, "0", {"my.plugin.endpoint": "https://plugin.example", "max.connections": "50"})
        with RawClient(broker.bootstrap_servers) as raw:  # the cluster default "", which librdkafka cannot name
            [answer] = raw.request(44, 1, {"validate_only": False, "resources": [{
                "resource_type": 4, "resource_name": "", "configs": [
                    {"name": "my.plugin.endpoint", "config_operation": 0, "value": "https://default.example"},
                    {"name": "my.plugin.timeout.ms", "config_operation": 0, "value": "30"}]}]}).responses
            assert answer.error_code == 0, answer.error_message
        legacy = ConfigResource(ResourceType.BROKER, "0", set_config={"my.plugin.endpoint": "https://plugin.example",
                                                                       "other.plugin.mode": "fast"})
        for future in admin(broker).alter_configs([legacy]).values():  # replaces the node's whole set
            future.result(30)
        broker.restart()
        with RawClient(broker.bootstrap_servers) as raw:
            node, default = described(raw, "0"), described(raw, "")
        assert node["my.plugin.endpoint"] == (None, dynamic_broker, True, True, 0, None,
                                              [("my.plugin.endpoint", None, dynamic_broker),
                                               ("my.plugin.endpoint", None, dynamic_default)])
        assert node["other.plugin.mode"] == (None, dynamic_broker, True, True, 0, None,
                                             [("other.plugin.mode", None, dynamic_broker)])
        assert node["my.plugin.timeout.ms"] == (None, dynamic_default, True, True, 0, None,
                                                [("my.plugin.timeout.ms", None, dynamic_default)])
        assert node["max.connections"][1] == ConfigSource.DEFAULT_CONFIG.value  # AlterConfigs replaced it
        assert set(default) == {"my.plugin.endpoint", "my.plugin.timeout.ms", "min.insync.replicas"}
        assert default["my.plugin.endpoint"] == (None, dynamic_default, True, True, 0, None,
                                                 [("my.plugin.endpoint", None, dynamic_default)])
        set_configs(broker, "0", {"other.plugin.mode": None})
        assert "other.plugin.mode" not in describe(broker, ResourceType.BROKER, "0")
