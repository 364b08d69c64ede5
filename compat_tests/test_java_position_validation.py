"""The Java consumer validates a committed position against the leader's epochs (KIP-320:
OffsetForLeaderEpoch of the epoch it was committed in). A group that committed in epoch 0 and
comes back after the leader moved and every batch of epoch 0 was deleted must go on from its
committed offset, as against Kafka, whose leader-epoch cache answers such an epoch with where
the log starts. trafka answered UNDEFINED: the client logged "Truncation detected" and reset to
the end (auto.offset.reset=latest), skipping every record written since."""

from __future__ import annotations

from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from testkit.cluster import produce_acknowledged

BEFORE, AFTER = 1000, 1500


def _produce(cluster, prefix: bytes, count: int) -> list[bytes]:
    """`count` records prefix-0, prefix-1, ... in small batches (acks=all), each acknowledged."""
    values = [b"%s-%d" % (prefix, i) for i in range(count)]
    produce_acknowledged(cluster, "kept", values, **{"batch.size": 4000})
    return values


def _group_read(java, cluster, want: int, reset: str) -> list[bytes]:
    consumer = java.make_consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "g",
                                   "enable.auto.commit": "false", "auto.offset.reset": reset})
    try:
        consumer.subscribe(["kept"])
        got = [r.value for r in consumer.poll_until(want, timeout_s=30)]
        consumer.commitSync()  # with the leader epoch of the last record read
        return got
    finally:
        consumer.close()


def test_a_java_group_committed_in_a_deleted_epoch_goes_on_from_its_offset(trafka_cluster, java_client_43):
    cluster = trafka_cluster
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    admin.create_topics([NewTopic("kept", 1, 3, config={"segment.bytes": "16384"})])["kept"].result(10)
    first = _produce(cluster, b"epoch0", BEFORE)
    assert _group_read(java_client_43, cluster, BEFORE, "earliest") == first
    state = cluster.partition_state("kept", 0)
    cluster.move_leader("kept", 0, next(r for r in state["replicas"] if r != state["leader"]))
    second = _produce(cluster, b"epoch1", AFTER)
    deleted = admin.delete_records([TopicPartition("kept", 0, BEFORE)])  # every batch of epoch 0
    assert [f.result(10).low_watermark for f in deleted.values()] == [BEFORE]
    assert _group_read(java_client_43, cluster, AFTER, "latest") == second
