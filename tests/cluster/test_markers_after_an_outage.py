"""A committed transaction whose partition had no leader when the coordinator wrote its markers
becomes readable (read_committed) as soon as the partition has a leader again, not at the next
run of the timed-out-transaction check (here 60 s): the marker is retried when leadership moves,
as Kafka's marker channel sends it once the partition has a leader. Found by the nemesis soak
(committed records unseen by the final read_committed read)."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from trafka.testing.waiting import wait_until


@pytest.mark.trafka_config({"transaction.abort.timed.out.transaction.cleanup.interval.ms": 60000,
                            "transaction.state.log.num.partitions": 3, "offsets.topic.num.partitions": 3})
def test_a_marker_that_found_no_leader_is_written_when_the_partition_has_one_again(trafka_cluster):
    cluster = trafka_cluster
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    admin.create_topics([NewTopic("payments", 1, replica_assignment=[[1, 2]])])["payments"].result(10)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": "payer",
                         "transaction.timeout.ms": 120000})
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(10):
        producer.produce("payments", b"p-%d" % i, partition=0)
    assert producer.flush(20) == 0
    state = cluster.partition_state("payments", 0)
    leader = state["leader"]
    follower = next(r for r in state["replicas"] if r != leader)
    cluster.stop_broker(follower)
    cluster.kill_broker(leader)  # the partition has no live replica: offline
    assert cluster.partition_state("payments", 0)["leader"] == -1
    producer.commit_transaction(60)  # the decision is durable; the marker waits for a leader
    cluster.start_broker(leader)
    wait_until(lambda: cluster.partition_state("payments", 0)["leader"] == leader, timeout=15, message="a leader again")
    started = time.monotonic()
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "auditors",
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.subscribe(["payments"])
    values = []
    while len(values) < 10 and time.monotonic() - started < 20:
        values += [m.value() for m in consumer.consume(100, 0.5) if m.error() is None]
    consumer.close()
    assert sorted(values) == sorted(b"p-%d" % i for i in range(10)), f"{len(values)} of 10 after 20 s"
    cluster.start_broker(follower)
