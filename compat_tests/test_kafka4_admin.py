"""The admin and metadata APIs a one-node Kafka 4 answers, from the admin clients of
kafka-python, confluent-kafka and Java (kafka-clients 4.3.0)."""

from __future__ import annotations

import pytest

from testkit.java import _jiter


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


def _produced_topic(bootstrap: str, name: str, value: bytes) -> str:
    from kafka import KafkaProducer

    from compat_tests.conftest import make_topic

    make_topic(bootstrap, name, partitions=2)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    producer.send(name, value, partition=1).get(timeout=10)
    producer.close()
    return name


@pytest.mark.compat("admin-log-dirs")
@pytest.mark.compat_client("kafka-python")
def test_kafka_python_describe_log_dirs(bootstrap, trafka_session_broker):
    from kafka import KafkaAdminClient

    topic = _produced_topic(bootstrap, "logdirs-kp", b"x" * 1000)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        (answer,) = admin.describe_log_dirs({topic: [0, 1, 7]})
    finally:
        admin.close()
    (log_dir,) = answer["log_dirs"]
    assert log_dir["log_dir"] == str(trafka_session_broker.data_dir.resolve())
    (described,) = log_dir["topics"]
    sizes = {p["partition_index"]: p["partition_size"] for p in described["partitions"]}
    assert set(sizes) == {0, 1}  # partition 7 does not exist: left out
    assert sizes[0] == 0 and sizes[1] > 1000


@pytest.mark.compat("admin-log-dirs")
@pytest.mark.compat_client("java-4.3.0")
def test_java_describe_log_dirs(java_client_43, bootstrap, trafka_session_broker):
    topic = _produced_topic(bootstrap, "logdirs-java", b"y" * 1000)
    admin = java_client_43.make_admin({"bootstrap.servers": bootstrap})
    jvm, call = java_client_43.jvm, java_client_43.call
    brokers = jvm.java.util.ArrayList()
    brokers.add(0)
    by_broker = call(call(call(admin.j.describeLogDirs, brokers).allDescriptions).get)
    dirs = by_broker.get(0)
    data_dir = str(trafka_session_broker.data_dir.resolve())
    assert list(_jiter(dirs.keySet())) == [data_dir]
    description = dirs.get(data_dir)
    replicas = description.replicaInfos()
    assert replicas.get(java_client_43.tp(topic, 1)).size() > 1000
    assert replicas.get(java_client_43.tp(topic, 0)).size() == 0
    assert description.totalBytes().getAsLong() >= description.usableBytes().getAsLong() > 0


@pytest.mark.compat("admin-elect-leaders")
@pytest.mark.compat_client("kafka-python")
def test_kafka_python_elect_leaders(bootstrap):
    from kafka import KafkaAdminClient

    from compat_tests.conftest import make_topic

    topic = make_topic(bootstrap, "elect-kp", partitions=2)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        response = admin.elect_leaders(0, {topic: [0, 1, 9]}, raise_errors=False)
        everything = admin.elect_leaders(0, None)
    finally:
        admin.close()
    (result,) = response.replica_election_results
    assert {p.partition_id: p.error_code for p in result.partition_result} == {0: 84, 1: 84, 9: 3}
    # kafka-python names every partition of every topic for None: none needs an election.
    assert {p.error_code for r in everything.replica_election_results for p in r.partition_result} == {84}


@pytest.mark.compat("admin-elect-leaders")
@pytest.mark.compat_client("confluent-kafka")
def test_confluent_elect_leaders(bootstrap):
    from confluent_kafka import ElectionType, TopicPartition
    from confluent_kafka.admin import AdminClient

    from compat_tests.conftest import make_topic

    topic = make_topic(bootstrap, "elect-ck", partitions=1)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    result = admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, 0)]).result(timeout=30)
    ((tp, error),) = result.items()
    assert (tp.topic, tp.partition) == (topic, 0)
    assert error.name() == "ELECTION_NOT_NEEDED"


@pytest.mark.compat("admin-elect-leaders")
@pytest.mark.compat_client("java-4.3.0")
def test_java_elect_leaders(java_client_43, bootstrap):
    from compat_tests.conftest import make_topic

    topic = make_topic(bootstrap, "elect-java", partitions=1)
    admin = java_client_43.make_admin({"bootstrap.servers": bootstrap})
    jvm, call = java_client_43.jvm, java_client_43.call
    partitions = jvm.java.util.HashSet()
    partitions.add(java_client_43.tp(topic, 0))
    election = jvm.org.apache.kafka.common.ElectionType.PREFERRED
    outcome = call(call(call(admin.j.electLeaders, election, partitions).partitions).get)
    error = outcome.get(java_client_43.tp(topic, 0))
    assert error.isPresent()
    assert error.get().getClass().getSimpleName() == "ElectionNotNeededException"


@pytest.mark.compat("admin-reassignments")
@pytest.mark.compat_client("kafka-python")
def test_kafka_python_partition_reassignments(bootstrap):
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.errors import InvalidReplicationAssignmentError, NoReassignmentInProgressError

    from compat_tests.conftest import make_topic

    topic = make_topic(bootstrap, "reassign-kp", partitions=3)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        outcome = admin.alter_partition_reassignments({
            TopicPartition(topic, 0): [0],      # to the only broker: done at once
            TopicPartition(topic, 1): [0, 1],   # broker 1 does not exist
            TopicPartition(topic, 2): None,     # cancel: nothing in progress
        })
        ongoing = admin.list_partition_reassignments()
    finally:
        admin.close()
    assert outcome == {
        TopicPartition(topic, 0): None,
        TopicPartition(topic, 1): InvalidReplicationAssignmentError,
        TopicPartition(topic, 2): NoReassignmentInProgressError,
    }
    assert ongoing == {}


@pytest.mark.compat("admin-reassignments")
@pytest.mark.compat_client("java-4.3.0")
def test_java_partition_reassignments(java_client_43, bootstrap):
    from compat_tests.conftest import make_topic

    topic = make_topic(bootstrap, "reassign-java", partitions=2)
    admin = java_client_43.make_admin({"bootstrap.servers": bootstrap})
    jvm, call = java_client_43.jvm, java_client_43.call
    optional = jvm.java.util.Optional
    to_self, to_missing = jvm.java.util.ArrayList(), jvm.java.util.ArrayList()
    to_self.add(0)
    to_missing.add(5)
    reassignments = jvm.java.util.HashMap()
    reassignments.put(java_client_43.tp(topic, 0), optional.of(jvm.org.apache.kafka.clients.admin.NewPartitionReassignment(to_self)))
    reassignments.put(java_client_43.tp(topic, 1), optional.of(jvm.org.apache.kafka.clients.admin.NewPartitionReassignment(to_missing)))
    futures = call(call(admin.j.alterPartitionReassignments, reassignments).values)
    assert call(futures.get(java_client_43.tp(topic, 0)).get) is None
    try:
        call(futures.get(java_client_43.tp(topic, 1)).get)
        raise AssertionError("a reassignment to a broker that does not exist was accepted")
    except Exception as exc:  # KafkaJavaError wrapping ExecutionException
        assert "InvalidReplicaAssignmentException" in str(exc)
    ongoing = call(call(call(admin.j.listPartitionReassignments).reassignments).get)
    assert ongoing.isEmpty()


@pytest.mark.compat("admin-quorum")
@pytest.mark.compat_client("kafka-python")
def test_kafka_python_describe_quorum(bootstrap):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        quorum = admin.describe_metadata_quorum()
    finally:
        admin.close()
    ((topic, partitions),) = [(t["topic_name"], t["partitions"]) for t in quorum["topics"]]
    (partition,) = partitions
    assert (topic, partition["partition_index"], partition["error"]) == ("__cluster_metadata", 0, None)
    assert partition["leader_id"] == 0
    assert [v["replica_id"] for v in partition["current_voters"]] == [0]
    assert partition["observers"] == []
    host, port = _host_port(bootstrap)
    assert quorum["nodes"] == [{"node_id": 0, "listeners": [{"name": "PLAINTEXT", "host": host, "port": port}]}]


@pytest.mark.compat("admin-quorum")
@pytest.mark.compat_client("java-4.3.0")
def test_java_describe_quorum(java_client_43, bootstrap):
    admin = java_client_43.make_admin({"bootstrap.servers": bootstrap})
    call = java_client_43.call
    info = call(call(call(admin.j.describeMetadataQuorum).quorumInfo).get)
    assert info.leaderId() == 0
    assert [v.replicaId() for v in _jiter(info.voters())] == [0]
    assert info.observers().isEmpty()
    host, port = _host_port(bootstrap)
    (node,) = list(info.nodes().values())
    assert [(e.host(), e.port()) for e in _jiter(node.endpoints())] == [(host, port)]


@pytest.mark.compat("admin-log-dirs")
@pytest.mark.compat_client("kafka-python")
def test_kafka_python_alter_replica_log_dirs(bootstrap, trafka_session_broker):
    from kafka import KafkaAdminClient
    from kafka.errors import LogDirNotFoundError, NoError, ReplicaNotAvailableError

    from compat_tests.conftest import make_topic

    topic = make_topic(bootstrap, "logdirs-move-kp", partitions=1)
    data_dir = str(trafka_session_broker.data_dir.resolve())
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        outcome = admin.alter_replica_log_dirs({
            (topic, 0, 0): data_dir,            # where it already is: a no-op
            (topic, 5, 0): data_dir,            # not hosted here
            ("logdirs-other", 0, 0): "/nowhere",  # not a log dir of this broker
        })
    finally:
        admin.close()
    assert {(tpr.topic, tpr.partition): error for tpr, error in outcome.items()} == {
        (topic, 0): NoError, (topic, 5): ReplicaNotAvailableError, ("logdirs-other", 0): LogDirNotFoundError,
    }


@pytest.mark.compat("admin-log-dirs")
@pytest.mark.compat_client("java-4.3.0")
def test_java_alter_replica_log_dirs(java_client_43, bootstrap, trafka_session_broker):
    from compat_tests.conftest import make_topic

    topic = make_topic(bootstrap, "logdirs-move-java", partitions=1)
    admin = java_client_43.make_admin({"bootstrap.servers": bootstrap})
    jvm, call = java_client_43.jvm, java_client_43.call
    replica = jvm.org.apache.kafka.common.TopicPartitionReplica(topic, 0, 0)
    moves = jvm.java.util.HashMap()
    moves.put(replica, str(trafka_session_broker.data_dir.resolve()))
    assert call(call(call(admin.j.alterReplicaLogDirs, moves).all).get) is None


@pytest.mark.compat("admin-describe-topics")
@pytest.mark.compat_client("java-4.3.0")
def test_java_describe_topics_pages_with_the_cursor(java_client_43, bootstrap):
    """Java 4.3's describeTopics uses DescribeTopicPartitions; a partition limit below the
    topics' sizes makes it follow next_cursor across requests and topics."""
    from compat_tests.conftest import make_topic

    make_topic(bootstrap, "dtp-a", partitions=3)
    make_topic(bootstrap, "dtp-b", partitions=4)
    admin = java_client_43.make_admin({"bootstrap.servers": bootstrap})
    jvm, call = java_client_43.jvm, java_client_43.call
    names = jvm.java.util.ArrayList()
    for n in ("dtp-b", "dtp-a"):
        names.add(n)
    options = jvm.org.apache.kafka.clients.admin.DescribeTopicsOptions().partitionSizeLimitPerResponse(2)
    described = call(call(call(admin.j.describeTopics, names, options).allTopicNames).get)
    assert sorted(described.keySet()) == ["dtp-a", "dtp-b"]
    for name, count in (("dtp-a", 3), ("dtp-b", 4)):
        parts = described.get(name).partitions()
        assert [p.partition() for p in parts] == list(range(count))
        assert [p.leader().id() for p in parts] == [0] * count
    missing = jvm.java.util.ArrayList()
    missing.add("dtp-none")
    try:
        call(call(call(admin.j.describeTopics, missing).allTopicNames).get)
        raise AssertionError("an absent topic was described")
    except Exception as exc:
        assert "UnknownTopicOrPartitionException" in str(exc)


def test_describe_topic_partitions_cursor_on_the_wire(bootstrap):
    from trafka.testing.rawwire import RawClient

    from compat_tests.conftest import make_topic

    make_topic(bootstrap, "dtp-raw", partitions=5)
    with RawClient(bootstrap) as raw:
        first = raw.request(75, 0, {"topics": [{"name": "dtp-raw"}], "response_partition_limit": 3, "cursor": None})
        rest = raw.request(75, 0, {"topics": [{"name": "dtp-raw"}], "response_partition_limit": 3,
                                   "cursor": dict(first.next_cursor)})
        wrong = raw.request(75, 0, {"topics": [{"name": "dtp-raw"}], "response_partition_limit": 3,
                                    "cursor": {"topic_name": "other", "partition_index": 0}})
    assert [p.partition_index for p in first.topics[0].partitions] == [0, 1, 2]
    assert (first.next_cursor.topic_name, first.next_cursor.partition_index) == ("dtp-raw", 3)
    assert [p.partition_index for p in rest.topics[0].partitions] == [3, 4]
    assert rest.next_cursor is None
    assert [t.error_code for t in wrong.topics] == [42]
