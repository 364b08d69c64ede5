"""The Kafka 4.1 cluster APIs of issue #13 under StandardAuthorizer, driven by kafka-python over
SASL_PLAINTEXT: UpdateFeatures needs ALTER on the cluster, ListConfigResources DESCRIBE_CONFIGS,
AlterClientQuotas ALTER_CONFIGS (as Kafka's KafkaApis checks them); a super user may."""

from __future__ import annotations

import pytest
from testkit.acl import allow, confluent_admin, login
from testkit.security import kafka_python_config


def _admin(broker, user):
    from kafka import KafkaAdminClient

    return KafkaAdminClient(bootstrap_servers=broker.bootstrap("SASL_PLAINTEXT"), **kafka_python_config(login(user)))


def test_cluster_apis_need_their_cluster_acl(broker):
    from kafka.errors import ClusterAuthorizationFailedError

    bob = _admin(broker, "bob")
    admin = _admin(broker, "admin")
    try:
        with pytest.raises(ClusterAuthorizationFailedError):
            bob.update_features({"group.version": ("SAFE_DOWNGRADE", 0)}, validate_only=True)
        with pytest.raises(ClusterAuthorizationFailedError):
            bob.list_config_resources()
        assert admin.update_features({"group.version": ("SAFE_DOWNGRADE", 0)}, validate_only=True) == {"group.version": "OK"}
        assert admin.list_config_resources(["BROKER"]) == {"broker": ["0"]}
        allow(confluent_admin(broker), "User:bob", "CLUSTER", "kafka-cluster", "DESCRIBE_CONFIGS")
        assert bob.list_config_resources(["BROKER"]) == {"broker": ["0"]}
        with pytest.raises(ClusterAuthorizationFailedError):  # DESCRIBE_CONFIGS does not imply ALTER
            bob.update_features({"group.version": ("SAFE_DOWNGRADE", 0)}, validate_only=True)
    finally:
        bob.close()
        admin.close()
