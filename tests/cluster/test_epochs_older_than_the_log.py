"""A position whose leader epoch is older than every epoch the log still has (its batches went
with DeleteRecords or retention) is still a valid position, as Kafka's leader-epoch cache
answers it: OffsetForLeaderEpoch of such an epoch is (that epoch, the start of the first epoch
the log knows), not UNDEFINED. Before, trafka answered UNDEFINED, and the Java consumer took a
group's committed position of such an epoch for a truncation and reset it to the end, skipping
every record written since (compat_tests/test_java_position_validation.py); here the answer on
the wire, after real clients wrote the log and DeleteRecords cut it."""

from __future__ import annotations

from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from testkit.cluster import produce_acknowledged
from trafka.testing.rawwire import RawClient

BEFORE, AFTER = 1000, 1500


def _produce(cluster, name: str, prefix: bytes, count: int) -> list[bytes]:
    """`count` records prefix-0, prefix-1, ... in small batches (acks=all), each acknowledged."""
    values = [b"%s-%d" % (prefix, i) for i in range(count)]
    produce_acknowledged(cluster, name, values, **{"batch.size": 4000})
    return values


def test_offset_for_leader_epoch_of_an_epoch_the_log_no_longer_has(trafka_cluster):
    """The answer on the wire, as Kafka's LeaderEpochFileCache.endOffsetFor gives it."""
    cluster = trafka_cluster
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    admin.create_topics([NewTopic("kept", 1, 3, config={"segment.bytes": "16384"})])["kept"].result(10)
    _produce(cluster, "kept", b"epoch0", BEFORE)
    state = cluster.partition_state("kept", 0)
    cluster.move_leader("kept", 0, next(r for r in state["replicas"] if r != state["leader"]))
    _produce(cluster, "kept", b"epoch1", AFTER)
    state = cluster.partition_state("kept", 0)
    deleted = admin.delete_records([TopicPartition("kept", 0, BEFORE)])
    assert [f.result(10).low_watermark for f in deleted.values()] == [BEFORE]

    def ask(epoch: int):
        with RawClient(cluster.broker_addresses[state["leader"]]) as client:
            body = client.request(23, 4, {"replica_id": -1, "topics": [{"topic": "kept", "partitions": [
                {"partition": 0, "current_leader_epoch": state["leader_epoch"], "leader_epoch": epoch}]}]})
        answer = body.topics[0].partitions[0]
        return answer.error_code, answer.leader_epoch, answer.end_offset

    assert ask(0) == (0, 0, BEFORE)  # older than every epoch left: that epoch, where the log starts
    assert ask(state["leader_epoch"]) == (0, state["leader_epoch"], BEFORE + AFTER)  # the current one: the log end
