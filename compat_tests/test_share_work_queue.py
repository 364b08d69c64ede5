"""One work queue, several kinds of members: a Java 4.3 KafkaShareConsumer and two confluent-kafka
ShareConsumers share one partition's 3,000 records (written in batches of 30). Each record goes
to exactly one member (the locks outlast the test), every member gets work, and every record
is acknowledged once."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer

from testkit.groups import create_topic
from testkit.java import share_consumer as java_share_consumer
from testkit.java import share_reset_earliest

RECORDS, PER_BATCH = 3000, 30


@pytest.mark.compat_client("java-4.3.0")
def test_java_and_confluent_share_consumers_share_one_partition(java_client_43, bootstrap):
    k = java_client_43
    jvm, call = k.jvm, k.call
    create_topic(bootstrap, "mixed-queue", 1)
    admin = k.make_admin({"bootstrap.servers": bootstrap})
    share_reset_earliest(k, admin, "mixed-workers")
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1000, "batch.num.messages": PER_BATCH})
    for first in range(0, RECORDS, PER_BATCH):
        for i in range(first, first + PER_BATCH):
            producer.produce("mixed-queue", b"job-%d" % i, partition=0)
        assert producer.flush(10) == 0

    java = java_share_consumer(k, bootstrap, "mixed-workers", "mixed-queue", explicit=True)
    confluent = {name: ShareConsumer({"bootstrap.servers": bootstrap, "group.id": "mixed-workers", "client.id": name,
                                      "share.acknowledgement.mode": "explicit", "max.poll.records": 100})
                 for name in ("c1", "c2")}
    for consumer in confluent.values():
        consumer.subscribe(["mixed-queue"])
    accept = jvm.org.apache.kafka.clients.consumer.AcknowledgeType.ACCEPT
    owner: dict[int, str] = {}

    def deliver(offset: int, count: int, name: str) -> None:
        assert offset not in owner, f"offset {offset} delivered to {owner[offset]} and to {name}"
        assert count == 1, f"offset {offset} is delivery {count} at {name}"
        owner[offset] = name

    try:
        deadline = time.monotonic() + 120
        while len(owner) < RECORDS and time.monotonic() < deadline:
            records = call(java.poll, jvm.java.time.Duration.ofMillis(200))
            iterator = call(records.iterator)
            while call(iterator.hasNext):
                record = call(iterator.next)
                deliver(call(record.offset), call(call(record.deliveryCount).get), "java")
                call(java.acknowledge, record, accept)
            for name, consumer in confluent.items():
                for message in consumer.poll(0.2) or []:
                    assert message.error() is None, message.error()
                    deliver(message.offset(), message.delivery_count(), name)
                    consumer.acknowledge(message, AcknowledgeType.ACCEPT)
    finally:
        call(java.close)
        for consumer in confluent.values():
            consumer.close()
    assert sorted(owner) == list(range(RECORDS))
    shares = {name: sum(1 for who in owner.values() if who == name) for name in ("java", "c1", "c2")}
    assert all(share > 0 for share in shares.values()), shares
