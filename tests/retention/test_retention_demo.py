"""The retention demo from the teaching material, end to end, scaled from minutes to seconds.

The original: a topic with 3 partitions, retention.ms=60000 and segment.ms=10000 (updated
through the admin client when the topic already exists), 100 keyed orders, then a heartbeat on
a timer; earliest offsets stay 0 while latest grows, then jump once segments age out.
Here: retention.ms=3000, segment.ms=1000, retention checked every 200 ms, and the heartbeat's
timer is the broker's clock, moved 250 ms between heartbeats (advance_clock runs the retention
checks that became due), so the timeline is broker time, not how fast this machine is.
"""

from __future__ import annotations

import pytest
from kafka import KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

from testkit.kafka_python import admin_client, offsets

TOPIC = "brew.orders.retention-demo"
PARTITIONS = 3


@pytest.mark.trafka_config({"log.retention.check.interval.ms": 200})
def test_earliest_jumps_once_segments_age_out_while_latest_grows(trafka_broker):
    bootstrap = trafka_broker.bootstrap_servers
    admin = admin_client(bootstrap)
    demo_configs = {"retention.ms": "60000", "segment.ms": "10000", "cleanup.policy": "delete"}
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1, topic_configs=demo_configs)])
    # The demo is idempotent: when the topic exists it updates the configs instead.
    scaled = {"retention.ms": "3000", "segment.ms": "1000"}
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC, configs=scaled)])
    described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC)])["topic"][TOPIC]
    assert (described["retention.ms"]["value"], described["segment.ms"]["value"]) == ("3000", "1000")
    admin.close()

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for n in range(100):
        producer.send(TOPIC, key=f"order-{n}".encode(), value=f"OrderPlaced order_id=order-{n}".encode())
    producer.flush()
    earliest, latest = offsets(bootstrap, TOPIC, PARTITIONS)
    orders_per_partition = dict(latest)
    assert earliest == {p: 0 for p in range(PARTITIONS)} and sum(latest.values()) == 100

    heartbeats = 0
    history = []
    def broker_ms() -> int:
        return trafka_broker.clock()["time_ms"]

    start = broker_ms()
    while broker_ms() - start < 15_000:
        for p in range(PARTITIONS):  # one heartbeat per partition, so every partition rolls
            producer.send(TOPIC, key=b"hb", value=f"hb-{heartbeats}".encode(), partition=p)
        producer.flush()
        heartbeats += 1
        earliest, latest = offsets(bootstrap, TOPIC, PARTITIONS)
        history.append(((broker_ms() - start) / 1000, earliest, latest))
        if all(earliest[p] >= orders_per_partition[p] for p in range(PARTITIONS)):
            break
        trafka_broker.advance_clock(250)
    producer.close()

    elapsed, earliest, latest = history[-1]
    # Every order aged out with its segments; earliest is now past them, latest kept growing.
    assert all(earliest[p] >= orders_per_partition[p] for p in range(PARTITIONS)), history
    assert all(latest[p] == orders_per_partition[p] + heartbeats for p in range(PARTITIONS))
    assert all(latest[p] - earliest[p] < 30 for p in range(PARTITIONS))  # only recent heartbeats remain
    # Nothing went before retention.ms (3 s) had passed since the orders were written.
    assert all(e == {p: 0 for p in range(PARTITIONS)} for t, e, _ in history if t < 2.5), history
    # Earliest never moves backwards; latest never stops growing.
    for (_, e1, l1), (_, e2, l2) in zip(history, history[1:]):
        assert all(e2[p] >= e1[p] and l2[p] > l1[p] for p in range(PARTITIONS))
    assert elapsed < 10, history
    # segment.ms rolled segments: each partition directory has several, the active one included.
    for p in range(PARTITIONS):
        logs = sorted((trafka_broker.data_dir / f"{TOPIC}-{p}").glob("*.log"))
        assert 1 <= len(logs) and int(logs[0].stem) == earliest[p]
