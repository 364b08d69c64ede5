"""API v3's consumer groups: a confluent-kafka consumer group as the REST proxy shows it (the
group, its consumers and their assignments, lags per partition and the lag summary)."""

from __future__ import annotations

import time
from urllib.parse import quote

from confluent_kafka import Consumer, Producer


def test_group_consumers_assignments_and_lags(proxy, broker):
    proxy.create_topic("work", 2)
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for i in range(30):
        producer.produce("work", value=b"%d" % i, partition=i % 2)
    producer.flush(10)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "workers", "client.id": "worker-1",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe(["work"])
    read = 0
    deadline = time.monotonic() + 20
    while read < 15 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None and message.partition() == 0:
            read += 1
            if read == 10:
                consumer.commit(message, asynchronous=False)
    try:
        group_url = f"{proxy.cluster}/consumer-groups/workers"
        groups = proxy.get(f"{proxy.cluster}/consumer-groups").json()
        assert groups["kind"] == "KafkaConsumerGroupList"
        (group,) = [g for g in groups["data"] if g["consumer_group_id"] == "workers"]
        assert group["kind"] == "KafkaConsumerGroup" and group["state"] == "STABLE" and group["is_simple"] is False
        assert group["type"] == "CLASSIC"
        assert group["partition_assignor"] in ("range", "roundrobin", "cooperative-sticky")
        assert group["coordinator"]["related"].endswith("/brokers/0")
        assert group["metadata"]["resource_name"].endswith("/consumer-group=workers")
        assert proxy.get(group_url).json() == group

        consumers = proxy.get(f"{group_url}/consumers").json()
        (member,) = consumers["data"]
        assert member["kind"] == "KafkaConsumer" and member["client_id"] == "worker-1" and member["instance_id"] is None
        member_url = f"{group_url}/consumers/{member['consumer_id']}"
        assert proxy.get(member_url).json() == member
        assignments = proxy.get(f"{member_url}/assignments").json()
        assert assignments["kind"] == "KafkaConsumerAssignmentList"
        assert [(a["topic_name"], a["partition_id"]) for a in assignments["data"]] == [("work", 0), ("work", 1)]
        assert proxy.get(f"{member_url}/assignments/work/partitions/1").json() == assignments["data"][1]

        lags = proxy.get(f"{group_url}/lags").json()
        assert lags["kind"] == "KafkaConsumerLagList"
        (lag,) = lags["data"]
        assert (lag["topic_name"], lag["partition_id"], lag["current_offset"], lag["log_end_offset"], lag["lag"]) == \
            ("work", 0, 10, 15, 5)
        assert lag["consumer_id"] == member["consumer_id"] and lag["client_id"] == "worker-1"
        assert proxy.get(f"{group_url}/lags/work/partitions/0").json() == lag
        summary = proxy.get(f"{group_url}/lag-summary").json()
        assert summary["kind"] == "KafkaConsumerGroupLagSummary"
        assert (summary["max_lag_topic_name"], summary["max_lag_partition_id"]) == ("work", 0)
        assert summary["total_lag"] == summary["max_lag"] == lag["lag"]
    finally:
        consumer.close()
    assert proxy.get(f"{proxy.cluster}/consumer-groups/nobody").status_code == 404
    assert proxy.get(f"{proxy.cluster}/consumer-groups/workers").json()["state"] == "EMPTY"
    assert proxy.get(f"{proxy.cluster}/consumer-groups/workers/consumers").json()["data"] == []
    lag = proxy.get(f"{proxy.cluster}/consumer-groups/workers/lags/work/partitions/0").json()
    assert (lag["current_offset"], lag["lag"], lag["consumer_id"]) == (10, 5, "")


def test_a_consumer_protocol_group(proxy, broker):
    """A KIP-848 group (group.protocol=consumer) is described by ConsumerGroupDescribe, as Kafka's
    Admin client describes it: its members, their assignments and lags as for a classic group."""
    proxy.create_topic("tasks", 3)
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for i in range(30):
        producer.produce("tasks", value=b"%d" % i, partition=i % 3)
    producer.flush(10)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "next-gen", "client.id": "ng-1",
                         "group.protocol": "consumer", "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe(["tasks"])
    read, deadline = 0, time.monotonic() + 20
    while read < 30 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            read += 1
            if message.partition() == 1 and message.offset() == 3:
                consumer.commit(message, asynchronous=False)  # committed offset 4 of 10
    try:
        group_url = f"{proxy.cluster}/consumer-groups/next-gen"
        group = proxy.get(group_url).json()
        assert (group["type"], group["state"], group["is_simple"]) == ("CONSUMER", "STABLE", False)
        assert group in proxy.get(f"{proxy.cluster}/consumer-groups").json()["data"]
        (member,) = proxy.get(f"{group_url}/consumers").json()["data"]
        assert member["client_id"] == "ng-1"
        member_url = member["metadata"]["self"].split(proxy.url, 1)[1]
        assert member_url == f"{group_url}/consumers/{quote(member['consumer_id'], safe='')}"
        assert proxy.get(member_url).json() == member
        answer = proxy.get(f"{member_url}/assignments")
        assert answer.status_code == 200, (member, answer.text)
        assignments = answer.json()["data"]
        assert [(a["topic_name"], a["partition_id"]) for a in assignments] == [("tasks", 0), ("tasks", 1), ("tasks", 2)]
        (lag,) = proxy.get(f"{group_url}/lags").json()["data"]
        assert (lag["partition_id"], lag["current_offset"], lag["log_end_offset"], lag["lag"], lag["consumer_id"]) == \
            (1, 4, 10, 6, member["consumer_id"])
        assert proxy.get(f"{group_url}/lag-summary").json()["total_lag"] == 6
    finally:
        consumer.close()
