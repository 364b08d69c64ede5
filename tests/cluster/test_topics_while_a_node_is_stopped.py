"""A simulated cluster's nodes take their topics from the one metadata log: a topic deleted and
made again under the same name while a node is stopped never brings the old topic's records
back on that node (its directories go with the deletion, as Kafka's stray replicas would)."""

from __future__ import annotations

import time
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def _done(futures) -> None:
    for future in futures.values():
        future.result(20)


def _log_end(cluster, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "watermarks"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=20)[1]
    finally:
        consumer.close()


def test_a_topic_deleted_and_made_again_while_its_node_is_stopped_starts_empty_there(trafka_cluster):
    admin = AdminClient({"bootstrap.servers": trafka_cluster.bootstrap_servers})
    _done(admin.create_topics([NewTopic("reborn", 1, replica_assignment=[[1]])]))
    producer = Producer({"bootstrap.servers": trafka_cluster.bootstrap_servers})
    for i in range(50):
        producer.produce("reborn", value=b"old-%d" % i)
    assert producer.flush(20) == 0
    assert _log_end(trafka_cluster, "reborn") == 50
    trafka_cluster.stop_broker(1)
    _done(admin.delete_topics(["reborn"], operation_timeout=20))
    # Only stopped brokers: refused, as Kafka's controller refuses an assignment of fenced brokers.
    refused = admin.create_topics([NewTopic("reborn", 1, replica_assignment=[[1]])])["reborn"]
    assert refused.exception(20).args[0].name() == "INVALID_REPLICA_ASSIGNMENT"
    _done(admin.create_topics([NewTopic("reborn", 1, replica_assignment=[[1, 2]])]))
    assert trafka_cluster.partition_state("reborn", 0)["isr"] == [2]  # broker 1 is down: out of sync, 2 leads
    assert not list(Path(trafka_cluster.data_dir, "broker-1").glob("reborn-0"))
    trafka_cluster.start_broker(1)
    deadline = time.monotonic() + 20
    while 1 not in trafka_cluster.partition_state("reborn", 0)["isr"]:
        assert time.monotonic() < deadline, trafka_cluster.partition_state("reborn", 0)
        time.sleep(0.05)
    trafka_cluster.move_leader("reborn", 0, 1)  # broker 1 leads: its copy is the new, empty topic
    assert _log_end(trafka_cluster, "reborn") == 0
