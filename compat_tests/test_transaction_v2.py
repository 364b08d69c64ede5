"""Transaction version 2 (KIP-890 part 2) with real clients: Java kafka-clients 4.3.0 sees
`transaction.version` 2 finalized and uses it (implicit partition adds, EndTxn v5 bumping the
epoch at every commit and abort, TxnOffsetCommit v5 without AddOffsetsToTxn), observed through
Java's Admin (DescribeTransactions, DescribeProducers); the classic clients keep their epoch;
a broker restart mid-transaction; UpdateFeatures lowering the level turns Java back."""

from __future__ import annotations

import uuid

import pytest

from compat_tests.conftest import make_topic
from testkit.txn_clients import committed_offset, producer, read_values

COMMITTED = "read_committed"
UNCOMMITTED = "read_uncommitted"


def unique(what: str) -> str:
    return f"{what}-{uuid.uuid4().hex[:8]}"


class JavaAdmin:
    def __init__(self, java, bootstrap):
        self.java = java
        self.admin = java.make_admin({"bootstrap.servers": bootstrap})

    def transaction(self, transactional_id: str):
        """(state, producer id, producer epoch, partitions) from DescribeTransactions."""
        ids = self.java.jvm.java.util.ArrayList()
        ids.add(transactional_id)
        call = self.java.call
        d = call(call(self.admin.j.describeTransactions, ids).description(transactional_id).get)
        return (d.state().toString(), d.producerId(), d.producerEpoch(),
                sorted((tp.topic(), tp.partition()) for tp in d.topicPartitions()))

    def producers(self, topic: str):
        """(producer id, epoch) of each producer DescribeProducers reports on the partition."""
        partitions = self.java.jvm.java.util.ArrayList()
        partitions.add(self.java.tp(topic, 0))
        call = self.java.call
        state = call(call(self.admin.j.describeProducers, partitions).partitionResult(self.java.tp(topic, 0)).get)
        return sorted((p.producerId(), p.producerEpoch()) for p in state.activeProducers())

    def set_transaction_version(self, level: int):
        jvm, call = self.java.jvm, self.java.call
        kinds = jvm.org.apache.kafka.clients.admin.FeatureUpdate.UpgradeType
        changes = jvm.java.util.HashMap()
        changes.put("transaction.version", jvm.org.apache.kafka.clients.admin.FeatureUpdate(
            level, kinds.SAFE_DOWNGRADE if level < 2 else kinds.UPGRADE))
        call(call(self.admin.j.updateFeatures, changes, jvm.org.apache.kafka.clients.admin.UpdateFeaturesOptions()).all().get)


def test_java43_bumps_the_epoch_at_every_commit_and_abort(request, java_client_43, bootstrap):
    topic = make_topic(bootstrap, unique("tv2"))
    tid = unique("tv2-java")
    admin = JavaAdmin(java_client_43, bootstrap)
    p = producer(request, "java-4.3.0", bootstrap, tid)
    p.init()
    state, pid, epoch, _ = admin.transaction(tid)
    assert state == "Empty"
    p.begin(); p.send(topic, b"c1"); p.flush()
    # Added by the Produce itself (v12+): no AddPartitionsToTxn was sent.
    assert admin.transaction(tid) == ("Ongoing", pid, epoch, [(topic, 0)])
    p.commit()
    assert admin.transaction(tid) == ("CompleteCommit", pid, epoch + 1, [])
    assert admin.producers(topic) == [(pid, epoch + 1)]  # the marker carries the bumped epoch
    p.begin(); p.send(topic, b"a1"); p.flush(); p.abort()
    assert admin.transaction(tid) == ("CompleteAbort", pid, epoch + 2, [])
    p.begin(); p.send(topic, b"c2"); p.commit()
    assert admin.transaction(tid) == ("CompleteCommit", pid, epoch + 3, [])
    assert admin.producers(topic) == [(pid, epoch + 3)]
    assert read_values(request, "java-4.3.0", bootstrap, topic, COMMITTED, until=b"c2") == [b"c1", b"c2"]
    assert read_values(request, "java-4.3.0", bootstrap, topic, UNCOMMITTED, count=3) == [b"c1", b"a1", b"c2"]
    assert read_values(request, "confluent-kafka", bootstrap, topic, COMMITTED, until=b"c2") == [b"c1", b"c2"]


def test_java43_send_offsets_adds_the_group_partition_itself(request, java_client_43, bootstrap):
    topic = make_topic(bootstrap, unique("tv2-offsets"))
    tid, group = unique("tv2-offsets"), unique("tv2-group")
    admin = JavaAdmin(java_client_43, bootstrap)
    p = producer(request, "java-4.3.0", bootstrap, tid)
    p.init()
    _, pid, epoch, _ = admin.transaction(tid)
    p.begin(); p.send(topic, b"out"); p.send_offsets(topic, 0, 7, group)
    state, _, _, partitions = admin.transaction(tid)
    assert state == "Ongoing" and [tp for tp in partitions if tp[0] == "__consumer_offsets"]
    p.commit()
    assert admin.transaction(tid)[:3] == ("CompleteCommit", pid, epoch + 1)
    assert committed_offset(bootstrap, group, topic) == 7
    # An aborted transaction's offsets are dropped.
    p.begin(); p.send(topic, b"dropped"); p.send_offsets(topic, 0, 9, group); p.abort()
    assert committed_offset(bootstrap, group, topic) == 7
    assert admin.transaction(tid)[:3] == ("CompleteAbort", pid, epoch + 2)


@pytest.mark.parametrize("client", ["confluent-kafka", "kafka-python", "java-3.9.1"])
def test_classic_clients_keep_their_epoch(request, java_client_43, bootstrap, client):
    topic = make_topic(bootstrap, unique(f"tv0-{client}"))
    tid = unique(f"tv0-{client}")
    admin = JavaAdmin(java_client_43, bootstrap)
    p = producer(request, client, bootstrap, tid)
    p.init()
    _, pid, epoch, _ = admin.transaction(tid)
    p.begin(); p.send(topic, b"c1"); p.commit()
    p.begin(); p.send(topic, b"a1"); p.flush(); p.abort()
    p.begin(); p.send(topic, b"c2"); p.commit()
    assert admin.transaction(tid) == ("CompleteCommit", pid, epoch, [])
    assert admin.producers(topic) == [(pid, epoch)]
    assert read_values(request, client, bootstrap, topic, COMMITTED, until=b"c2") == [b"c1", b"c2"]


@pytest.mark.timeout(150)
@pytest.mark.parametrize("ending", ["commit", "abort"])
def test_java43_finishes_a_transaction_open_across_a_broker_restart(request, java_client_43, trafka_broker, ending):
    bootstrap = trafka_broker.bootstrap_servers
    topic = make_topic(bootstrap, unique("tv2-restart"))
    tid = unique("tv2-restart")
    p = producer(request, "java-4.3.0", bootstrap, tid)
    p.init()
    p.begin(); p.send(topic, b"before"); p.commit()
    p.begin(); p.send(topic, b"open"); p.flush()
    trafka_broker.restart(kill=True)
    getattr(p, ending)()
    p.begin(); p.send(topic, b"after"); p.commit()
    admin = JavaAdmin(java_client_43, bootstrap)
    state, _, epoch, _ = admin.transaction(tid)
    assert state == "CompleteCommit" and epoch == 3  # init 0, then one bump per transaction
    expected = [b"before", b"open", b"after"] if ending == "commit" else [b"before", b"after"]
    assert read_values(request, "java-4.3.0", bootstrap, topic, COMMITTED, until=b"after") == expected


@pytest.mark.timeout(150)
def test_lowering_transaction_version_turns_java43_back_to_the_classic_protocol(request, java_client_43, trafka_broker):
    bootstrap = trafka_broker.bootstrap_servers
    topic = make_topic(bootstrap, unique("tv-lowered"))
    admin = JavaAdmin(java_client_43, bootstrap)
    admin.set_transaction_version(0)
    tid = unique("tv-lowered")
    p = producer(request, "java-4.3.0", bootstrap, tid)
    p.init()
    _, pid, epoch, _ = admin.transaction(tid)
    p.begin(); p.send(topic, b"c1"); p.commit()
    p.begin(); p.send(topic, b"a1"); p.flush(); p.abort()
    assert admin.transaction(tid) == ("CompleteAbort", pid, epoch, [])  # no bump: EndTxn v4
    # Raised again, a new producer uses version 2.
    admin.set_transaction_version(2)
    tid2 = unique("tv-raised")
    p2 = producer(request, "java-4.3.0", bootstrap, tid2)
    p2.init()
    _, pid2, epoch2, _ = admin.transaction(tid2)
    p2.begin(); p2.send(topic, b"c2"); p2.commit()
    assert admin.transaction(tid2) == ("CompleteCommit", pid2, epoch2 + 1, [])
    assert read_values(request, "java-4.3.0", bootstrap, topic, COMMITTED, until=b"c2") == [b"c1", b"c2"]


def _request_counts(broker) -> dict[str, int]:
    def read(inner):
        return {name: stats.count for name, stats in inner.stats.apis.items()}

    return broker._thread_broker.call(read, broker._thread_broker.broker)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("client, adds", [("java-4.3.0", False), ("java-3.9.1", True)])
def test_which_requests_each_protocol_sends(request, java_client_43, trafka_inprocess_broker, client, adds):
    """Version 2 sends no AddPartitionsToTxn / AddOffsetsToTxn (the Produce and TxnOffsetCommit
    add their partitions); the classic protocol does."""
    bootstrap = trafka_inprocess_broker.bootstrap_servers
    topic = make_topic(bootstrap, unique("tv-requests"))
    p = producer(request, client, bootstrap, unique("tv-requests"))
    p.init()
    before = _request_counts(trafka_inprocess_broker)
    p.begin(); p.send(topic, b"v"); p.send_offsets(topic, 0, 1, unique("tv-requests")); p.commit()
    after = _request_counts(trafka_inprocess_broker)
    sent = {name: after.get(name, 0) - before.get(name, 0) for name in ("AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn")}
    assert sent == ({"AddPartitionsToTxn": 1, "AddOffsetsToTxn": 1, "EndTxn": 1} if adds else
                    {"AddPartitionsToTxn": 0, "AddOffsetsToTxn": 0, "EndTxn": 1})
    assert read_values(request, client, bootstrap, topic, COMMITTED, count=1) == [b"v"]
