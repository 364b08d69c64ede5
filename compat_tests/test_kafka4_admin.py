"""The admin and metadata APIs a one-node Kafka 4 answers, from the admin clients of
kafka-python, confluent-kafka and Java (kafka-clients 4.3.0)."""

from __future__ import annotations

import pytest

from compat_tests.java import _jiter


def _host_port(bootstrap: str) -> tuple[str, int]:
    host, port = bootstrap.rsplit(":", 1)
    return host, int(port)


@pytest.mark.compat("admin-cluster")
@pytest.mark.compat_client("kafka-python")
def test_kafka_python_describe_cluster(bootstrap):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        cluster = admin.describe_cluster()
    finally:
        admin.close()
    host, port = _host_port(bootstrap)
    assert [(b["broker_id"], b["host"], b["port"], b["is_fenced"]) for b in cluster["brokers"]] == [(0, host, port, False)]
    assert cluster["controller_id"] == 0
    assert len(cluster["cluster_id"]) == 22
    # No authorizer: every cluster operation, as Kafka answers without one.
    assert {"ALTER", "DESCRIBE", "CLUSTER_ACTION", "IDEMPOTENT_WRITE"} <= {
        str(op).rsplit(".", 1)[-1] for op in cluster["authorized_operations"]
    }


@pytest.mark.compat("admin-cluster")
@pytest.mark.compat_client("confluent-kafka")
def test_confluent_describe_cluster(bootstrap):
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    cluster = admin.describe_cluster(include_authorized_operations=True, request_timeout=20).result(timeout=30)
    host, port = _host_port(bootstrap)
    assert [(n.id, n.host, n.port) for n in cluster.nodes] == [(0, host, port)]
    assert cluster.controller.id == 0
    assert len(cluster.cluster_id) == 22
    assert len(cluster.authorized_operations) == 7


@pytest.mark.compat("admin-cluster")
@pytest.mark.compat_client("java-4.3.0")
def test_java_describe_cluster(java_client_43, bootstrap):
    admin = java_client_43.make_admin({"bootstrap.servers": bootstrap})
    call = java_client_43.call
    result = call(admin.j.describeCluster)
    nodes = call(call(result.nodes).get)
    controller = call(call(result.controller).get)
    cluster_id = call(call(result.clusterId).get)
    host, port = _host_port(bootstrap)
    assert [(n.id(), n.host(), n.port()) for n in _jiter(nodes)] == [(0, host, port)]
    assert controller.id() == 0
    assert len(cluster_id) == 22
