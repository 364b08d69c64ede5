"""DeleteRecords refuses what Kafka refuses (ReplicaManager.deleteRecordsOnLocalLog and
Partition.deleteRecordsOnLeader): an internal topic's records (__consumer_offsets,
__transaction_state, __share_group_state) are INVALID_TOPIC_EXCEPTION, and a topic whose
cleanup.policy has no `delete` is POLICY_VIOLATION, so neither a group's committed offsets nor a
compacted topic's latest values can be cut away. Before, trafka moved their log start: a group
that committed 2,000 records' worth lost its offsets. Real clients over a real socket."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

RECORDS = 2000


def _delete(admin, topic: str, partition: int, offset: int):
    [future] = admin.delete_records([TopicPartition(topic, partition, offset)]).values()
    return future.result(10)


def _refused(admin, topic: str, partition: int, offset: int) -> int:
    with pytest.raises(KafkaException) as refused:
        _delete(admin, topic, partition, offset)
    return refused.value.args[0].code()


def test_internal_and_compacted_topics_refuse_delete_records(trafka_broker):
    bootstrap = trafka_broker.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic("plain", 1, 1), NewTopic("latest", 1, 1, config={"cleanup.policy": "compact"}),
                                       NewTopic("both", 1, 1, config={"cleanup.policy": "compact,delete"})]).values():
        future.result(10)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for topic in ("plain", "latest", "both"):
        for i in range(RECORDS):
            producer.produce(topic, b"v%d" % i, key=b"k%d" % (i % 50), partition=0)
    assert producer.flush(20) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "keeps", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.subscribe(["plain"])
    read = 0
    while read < RECORDS:
        read += sum(1 for m in consumer.consume(500, 1) if m.error() is None)
    consumer.commit(asynchronous=False)
    consumer.close()

    offsets_partition = next(p for p in range(50) if _has_records(bootstrap, "__consumer_offsets", p))
    assert _refused(admin, "__consumer_offsets", offsets_partition, -1) == KafkaError.TOPIC_EXCEPTION  # INVALID_TOPIC_EXCEPTION (17)
    assert _refused(admin, "__transaction_state", 0, 0) == KafkaError.TOPIC_EXCEPTION  # INVALID_TOPIC_EXCEPTION (17)
    assert _refused(admin, "latest", 0, 1000) == KafkaError.POLICY_VIOLATION
    assert _delete(admin, "both", 0, 1000).low_watermark == 1000
    assert _delete(admin, "plain", 0, 1000).low_watermark == 1000

    # The group's commit is still there after a restart (replayed from __consumer_offsets).
    trafka_broker.restart()
    again = Consumer({"bootstrap.servers": trafka_broker.bootstrap_servers, "group.id": "keeps"})
    try:
        [committed] = again.committed([TopicPartition("plain", 0)], timeout=10)
    finally:
        again.close()
    assert committed.offset == RECORDS


def _has_records(bootstrap: str, topic: str, partition: int) -> bool:
    probe = Consumer({"bootstrap.servers": bootstrap, "group.id": "probe"})
    try:
        low, high = probe.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
    finally:
        probe.close()
    return high > low
