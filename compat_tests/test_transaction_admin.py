"""Transaction admin APIs (DescribeTransactions, ListTransactions, DescribeProducers) from
kafka-python's admin client and Java's Admin (kafka-clients 4.3.0), against a transaction
left open by a confluent-kafka producer."""

from __future__ import annotations

import uuid

import pytest

from compat_tests.conftest import make_topic
from testkit.txn_clients import producer


@pytest.fixture
def open_transaction(request, bootstrap):
    topic = make_topic(bootstrap, f"txadmin-{uuid.uuid4().hex[:8]}")
    transactional_id = f"txadmin-{uuid.uuid4().hex[:8]}"
    p = producer(request, "confluent-kafka", bootstrap, transactional_id, timeout_ms=90000)
    p.init()
    p.begin(); p.send(topic, b"committed"); p.commit()
    p.begin(); p.send(topic, b"open"); p.flush()
    yield topic, transactional_id
    p.abort()


def test_kafka_python_admin(bootstrap, open_transaction):
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.errors import TransactionalIdNotFoundError

    topic, transactional_id = open_transaction
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        with pytest.raises(TransactionalIdNotFoundError):
            admin.describe_transactions(["no-such-id"])
        described = admin.describe_transactions([transactional_id])
        listed = admin.list_transactions(state_filters=["Ongoing"])
        producers = admin.describe_producers([TopicPartition(topic, 0)])
    finally:
        admin.close()
    description = described[transactional_id]
    assert description.state.value == "Ongoing"
    assert description.topic_partitions == {TopicPartition(topic, 0)}
    assert description.transaction_timeout_ms == 90000
    assert [(t.transactional_id, t.state.value) for listings in listed.values() for t in listings
            if t.transactional_id == transactional_id] == [(transactional_id, "Ongoing")]
    (active,) = producers[TopicPartition(topic, 0)].active_producers
    assert active.producer_id == description.producer_id
    assert active.current_transaction_start_offset == 2  # after "committed" and its marker

def test_java_admin(java_client_43, bootstrap, open_transaction):
    topic, transactional_id = open_transaction
    admin = java_client_43.make_admin({"bootstrap.servers": bootstrap})
    jvm, call = java_client_43.jvm, java_client_43.call
    ids = jvm.java.util.ArrayList()
    ids.add(transactional_id)
    description = call(call(admin.j.describeTransactions, ids).description(transactional_id).get)
    assert description.state().toString() == "Ongoing"
    assert [(tp.topic(), tp.partition()) for tp in description.topicPartitions()] == [(topic, 0)]
    assert description.transactionStartTimeMs().isPresent()
    listings = call(call(admin.j.listTransactions).all().get)
    assert transactional_id in [t.transactionalId() for t in listings]
    partitions = jvm.java.util.ArrayList()
    partitions.add(java_client_43.tp(topic, 0))
    state = call(call(admin.j.describeProducers, partitions).partitionResult(java_client_43.tp(topic, 0)).get)
    (active,) = list(state.activeProducers())
    assert active.producerId() == description.producerId()
    assert active.currentTransactionStartOffset().getAsLong() == 2


def test_kafka_python_aborts_a_hanging_transaction(request, bootstrap):
    """KIP-664's tooling: find the open transaction with DescribeProducers, abort it with
    WriteTxnMarkers; the last stable offset moves past it at once."""
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.admin import AbortTransactionSpec

    from testkit.txn_clients import read_values

    topic = make_topic(bootstrap, f"hanging-{uuid.uuid4().hex[:8]}")
    p = producer(request, "confluent-kafka", bootstrap, f"hanging-{uuid.uuid4().hex[:8]}", timeout_ms=90000)
    p.init()
    p.begin(); p.send(topic, b"hanging"); p.flush()
    tp = TopicPartition(topic, 0)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        (active,) = admin.describe_producers([tp])[tp].active_producers
        assert active.current_transaction_start_offset == 0
        admin.abort_transaction(AbortTransactionSpec(tp, active.producer_id, active.producer_epoch))
        assert admin.describe_producers([tp])[tp].active_producers[0].current_transaction_start_offset == -1
    finally:
        admin.close()
    other = producer(request, "confluent-kafka", bootstrap, f"after-{uuid.uuid4().hex[:8]}")
    other.init()
    other.begin(); other.send(topic, b"after"); other.commit()
    assert read_values(request, "confluent-kafka", bootstrap, topic, "read_committed", until=b"after") == [b"after"]


def test_java_admin_fences_producers(request, java_client_43, bootstrap):
    """Admin.fenceProducers (KIP-618, used by Kafka Connect's exactly-once sources): an epoch
    bump through InitProducerId that aborts the open transaction and fences its producer."""
    from testkit.txn_clients import TxnFailed, read_values

    topic = make_topic(bootstrap, f"fence-admin-{uuid.uuid4().hex[:8]}")
    transactional_id = f"fence-admin-{uuid.uuid4().hex[:8]}"
    p = producer(request, "java-4.3.0", bootstrap, transactional_id)
    p.init()
    p.begin(); p.send(topic, b"fenced"); p.flush()
    admin = java_client_43.make_admin({"bootstrap.servers": bootstrap})
    ids = java_client_43.jvm.java.util.ArrayList()
    ids.add(transactional_id)
    java_client_43.call(java_client_43.call(admin.j.fenceProducers, ids).all().get)
    with pytest.raises(TxnFailed) as failed:
        p.commit()
    assert failed.value.error in ("ProducerFencedException", "InvalidProducerEpochException")
    after = producer(request, "confluent-kafka", bootstrap, f"after-{uuid.uuid4().hex[:8]}")
    after.init()
    after.begin(); after.send(topic, b"after"); after.commit()
    assert read_values(request, "confluent-kafka", bootstrap, topic, "read_committed", until=b"after") == [b"after"]
