"""Exactly-once consume-transform-produce with a KIP-848 consumer (Java kafka-clients 4.3.0,
group.protocol=consumer): the producer's TxnOffsetCommit carries the consumer's group metadata
(member id and member epoch); the offsets land on the consumer group when the transaction
commits, and a stale member epoch is refused (ILLEGAL_GENERATION: CommitFailedException)."""

from __future__ import annotations

import pytest

from testkit.groups import create_topic, produce
from testkit.java import KafkaJavaError
from trafka.testing.rawwire import RawClient

WAIT_S = 60


def committed(bootstrap: str, group: str, topic: str) -> int:
    with RawClient(bootstrap) as raw:
        [answer] = raw.request(9, 9, {"groups": [{"group_id": group, "member_id": None, "member_epoch": -1, "topics": [
            {"name": topic, "partition_indexes": [0]}]}], "require_stable": True}).groups
    return answer.topics[0].partitions[0].committed_offset


def test_transactional_offsets_of_a_consumer_protocol_member(consumer_broker, java):
    bootstrap = consumer_broker.bootstrap_servers
    create_topic(bootstrap, "in", 1)
    create_topic(bootstrap, "out", 1)
    produce(bootstrap, "in", ["a", "b", "c"])
    consumer = java.make_consumer({"bootstrap.servers": bootstrap, "group.id": "eos", "group.protocol": "consumer",
                                   "enable.auto.commit": "false", "isolation.level": "read_committed"})
    producer = java.make_producer({"bootstrap.servers": bootstrap, "transactional.id": "eos-tx"})
    jvm = java.jvm
    try:
        consumer.subscribe(["in"])
        assert [r.value for r in consumer.poll_until(3, timeout_s=WAIT_S)] == [b"a", b"b", b"c"]
        java.call(producer.j.initTransactions)

        def send_offsets(offset: int, metadata) -> None:
            java.call(producer.j.beginTransaction)
            producer.send("out", None, b"out-%d" % offset)
            offsets = jvm.java.util.HashMap()
            offsets.put(java.tp("in", 0), jvm.org.apache.kafka.clients.consumer.OffsetAndMetadata(offset))
            java.call(producer.j.sendOffsetsToTransaction, offsets, metadata)
            java.call(producer.j.commitTransaction)

        metadata = consumer.j.groupMetadata()
        assert metadata.generationId() >= 1 and metadata.memberId()
        send_offsets(3, metadata)
        assert committed(bootstrap, "eos", "in") == 3

        stale = jvm.org.apache.kafka.clients.consumer.ConsumerGroupMetadata(
            "eos", metadata.generationId() - 1, metadata.memberId(), jvm.java.util.Optional.empty())
        with pytest.raises(KafkaJavaError) as refused:
            send_offsets(2, stale)
        assert refused.value.simple_name == "CommitFailedException"
        java.call(producer.j.abortTransaction)
        assert committed(bootstrap, "eos", "in") == 3
    finally:
        producer.close()
        consumer.close()
