"""The admin clients of KafkaJS and @platformatic/kafka against the session broker: topics
(create, duplicate, metadata, partitions, delete), configs (describe, alter), list offsets
(earliest, latest, by timestamp), delete records, consumer groups (list, describe, committed
offsets: fetch, set, reset, delete offsets, delete the group). Each call is the client's own admin
method with its own arguments (testkit/node/<client>.mjs passes them through)."""

from __future__ import annotations

import uuid

import pytest

from compat_tests.conftest import make_driver
from testkit.clients.base import Msg
from testkit.clients.node import NodeError, wait_state

TOPIC_RESOURCE, SET, DELETE = 2, 0, 1  # Kafka's ConfigResource type and IncrementalAlterConfigs operations
STAMP = 1_600_000_000_000


def unique(what: str) -> str:
    return f"{what}-{uuid.uuid4().hex[:8]}"


def fill(driver, topic: str, partitions: int, per_partition: int) -> None:
    """per_partition records in each partition, record i stamped STAMP + i (10 sends each)."""
    for p in range(partitions):
        msgs = [Msg(b"k%d" % i, b"p%d-%d" % (p, i), (), STAMP + i) for i in range(per_partition)]
        driver.produce(topic, msgs, partition=p, chunk=max(1, per_partition // 10))


def big(n: int) -> dict:
    return {"$bigint": str(n)}


@pytest.mark.compat("admin-topics", "admin-configs", "metadata", "list-offsets")
@pytest.mark.parametrize("client", ["kafkajs"])
def test_kafkajs_admin(request, bootstrap, client):
    d = make_driver(request, client, bootstrap)
    topic, group = unique("kjs-admin"), unique("kjs-admin-group")
    assert d.admin("createTopics", {"topics": [{"topic": topic, "numPartitions": 2, "replicationFactor": 1,
                                                "configEntries": [{"name": "retention.ms", "value": "3600000"}]}]}) is True
    assert d.admin("createTopics", {"topics": [{"topic": topic, "numPartitions": 2}]}) is False  # exists: KafkaJS says false
    assert topic in d.admin("listTopics")
    (meta,) = d.admin("fetchTopicMetadata", {"topics": [topic]})["topics"]
    assert [(p["partitionId"], p["leader"], p["replicas"], p["isr"]) for p in meta["partitions"]] == \
        [(0, 0, [0], [0]), (1, 0, [0], [0])]
    d.admin("createPartitions", {"topicPartitions": [{"topic": topic, "count": 4}]})
    assert len(d.admin("fetchTopicMetadata", {"topics": [topic]})["topics"][0]["partitions"]) == 4

    def configs(names=None):
        resource = {"type": "topic", "name": topic, **({"configNames": names} if names else {})}
        (res,) = d.admin("describeConfigs", {"resources": [resource]})["resources"]
        assert res["errorCode"] == 0, res
        return {c["configName"]: (c["configValue"], c["isDefault"]) for c in res["configEntries"]}

    assert configs(["retention.ms", "cleanup.policy"]) == {"retention.ms": ("3600000", False),
                                                           "cleanup.policy": ("delete", True)}
    every = configs()
    assert every["retention.ms"] == ("3600000", False) and every["segment.bytes"][1] is True and len(every) > 20
    d.admin("alterConfigs", {"resources": [{"type": "topic", "name": topic,
                                            "configEntries": [{"name": "cleanup.policy", "value": "compact,delete"}]}]})
    # AlterConfigs (not incremental) replaces the topic's whole set: retention.ms falls back to its default.
    # compact,delete, not compact: Kafka refuses DeleteRecords (below) without delete (POLICY_VIOLATION).
    after = configs(["retention.ms", "cleanup.policy"])
    assert after["cleanup.policy"] == ("compact,delete", False) and after["retention.ms"][1] is True
    (broker,) = d.admin("describeConfigs", {"resources": [{"type": "broker", "name": "0"}]})["resources"]
    assert {c["configName"] for c in broker["configEntries"]} >= {"num.partitions", "log.retention.hours"}

    fill(d, topic, 4, 100)
    offsets = d.admin("fetchTopicOffsets", [topic])
    assert sorted((o["partition"], o["low"], o["high"]) for o in offsets) == [(p, "0", "100") for p in range(4)]
    by_time = d.admin("fetchTopicOffsetsByTimestamp", [topic, STAMP + 42])
    assert sorted((o["partition"], o["offset"]) for o in by_time) == [(p, "42") for p in range(4)]
    after_last = d.admin("fetchTopicOffsetsByTimestamp", [topic, STAMP + 10_000])
    # the broker answers -1 (no such record); KafkaJS puts the high watermark in its place
    assert sorted((o["partition"], o["offset"]) for o in after_last) == [(p, "100") for p in range(4)]
    d.admin("deleteTopicRecords", {"topic": topic, "partitions": [{"partition": 0, "offset": "30"},
                                                                  {"partition": 3, "offset": "-1"}]})  # -1: all
    lows = {o["partition"]: o["low"] for o in d.admin("fetchTopicOffsets", [topic])}
    assert lows == {0: "30", 1: "0", 2: "0", 3: "100"}

    got = d.group_consume(topic, group, 70 + 100 + 100)  # commits what it read
    assert len(got) == 270
    assert group in {g["groupId"] for g in d.admin("listGroups")["groups"]}
    (described,) = d.admin("describeGroups", [[group]])["groups"]
    assert (described["state"], described["protocolType"], described["members"]) == ("Empty", "consumer", [])

    def committed():
        (t,) = d.admin("fetchOffsets", {"groupId": group, "topics": [topic]})
        return {p["partition"]: p["offset"] for p in t["partitions"]}

    assert committed() == {0: "100", 1: "100", 2: "100", 3: "-1"}  # nothing read in 3: no offset
    # setOffsets runs a paused group member until its first fetch round (KafkaJS waits its 5 s
    # maxWaitTime there, whatever the broker); resetOffsets is the same call, so it is left out.
    d.admin("setOffsets", {"groupId": group, "topic": topic, "partitions": [{"partition": 1, "offset": "40"}]})
    assert committed() == {0: "100", 1: "40", 2: "100", 3: "-1"}
    got = d.group_consume(topic, group, 60)  # all that is left to read: partition 1 from 40
    assert sorted(g.value for g in got) == sorted(b"p1-%d" % i for i in range(40, 100))
    assert d.admin("deleteGroups", [[group]]) == [{"groupId": group, "errorCode": 0}]
    assert group not in {g["groupId"] for g in d.admin("listGroups")["groups"]}
    d.admin("deleteTopics", {"topics": [topic]})
    assert topic not in d.admin("listTopics")


@pytest.mark.compat("admin-topics", "admin-configs", "metadata", "list-offsets")
@pytest.mark.parametrize("client", ["platformatic-kafka"])
def test_platformatic_admin(request, bootstrap, client):
    d = make_driver(request, client, bootstrap)
    topic, group = unique("plt-admin"), unique("plt-admin-group")
    (created,) = d.admin("createTopics", {"topics": [topic], "partitions": 2, "replicas": 1,
                                          "configs": [{"name": "retention.ms", "value": "3600000"}]})
    assert (created["name"], created["partitions"], created["replicas"]) == (topic, 2, 1)
    assert created["configuration"]["retention.ms"] == "3600000"
    with pytest.raises(NodeError) as exists:
        d.admin("createTopics", {"topics": [topic], "partitions": 2, "replicas": 1})
    assert exists.value.kafka_errors() == {"TOPIC_ALREADY_EXISTS"}
    assert topic in d.admin("listTopics")
    meta = d.admin("metadata", {"topics": [topic]})["topics"][topic]
    assert meta["id"] == created["id"] and [(p["leader"], p["isr"]) for p in meta["partitions"]] == [(0, [0])] * 2
    with pytest.raises(NodeError) as refused:  # an empty assignment list for two new partitions, as Kafka refuses it
        d.admin("createPartitions", {"topics": [{"name": topic, "count": 4, "assignments": []}]})
    assert refused.value.kafka_errors() == {"INVALID_REPLICA_ASSIGNMENT"}
    d.admin("createPartitions", {"topics": [{"name": topic, "count": 4}]})
    assert d.admin("metadata", {"topics": [topic], "forceUpdate": True})["topics"][topic]["partitionsCount"] == 4

    def configs(keys=None):
        resource = {"resourceType": TOPIC_RESOURCE, "resourceName": topic, **({"configurationKeys": keys} if keys else {})}
        (res,) = d.admin("describeConfigs", {"resources": [resource]})
        return {c["name"]: (c["value"], c["configSource"]) for c in res["configs"]}

    assert configs(["retention.ms", "cleanup.policy"]) == {"retention.ms": ("3600000", 1), "cleanup.policy": ("delete", 5)}
    assert len(configs()) > 20
    d.admin("incrementalAlterConfigs", {"resources": [{"resourceType": TOPIC_RESOURCE, "resourceName": topic, "configs": [
        {"name": "cleanup.policy", "configOperation": SET, "value": "compact,delete"},  # delete: DeleteRecords below
        {"name": "retention.ms", "configOperation": DELETE}]}]})
    assert configs(["retention.ms", "cleanup.policy"]) == {"retention.ms": ("604800000", 5), "cleanup.policy": ("compact,delete", 1)}

    fill(d, topic, 4, 100)

    def list_offsets(timestamp: int) -> dict[int, str]:
        (t,) = d.admin("listOffsets", {"topics": [{"name": topic, "partitions": [
            {"partitionIndex": p, "timestamp": big(timestamp)} for p in range(4)]}]})
        return {p["partitionIndex"]: p["offset"] for p in t["partitions"]}

    assert list_offsets(-1) == {p: "100" for p in range(4)} and list_offsets(-2) == {p: "0" for p in range(4)}
    assert list_offsets(STAMP + 42) == {p: "42" for p in range(4)}
    assert list_offsets(STAMP + 10_000) == {p: "-1" for p in range(4)}
    (deleted,) = d.admin("deleteRecords", {"topics": [{"name": topic, "partitions": [
        {"partition": 0, "offset": big(30)}, {"partition": 3, "offset": big(-1)}]}]})
    assert sorted((p["partition"], p["lowWatermark"]) for p in deleted["partitions"]) == [(0, "30"), (3, "100")]
    assert list_offsets(-2) == {0: "30", 1: "0", 2: "0", 3: "100"}

    got = d.group_consume(topic, group, 270)
    assert len(got) == 270
    assert d.admin("listGroups")[group]["state"] == "Empty"
    described = d.admin("describeGroups", {"groups": [group]})[group]
    assert (described["state"], described["protocolType"], described["members"]) == ("Empty", "consumer", {})

    def committed():
        (g,) = d.admin("listConsumerGroupOffsets", {"groups": [group]})
        return {p["partitionIndex"]: p["committedOffset"] for t in g["topics"] if t["name"] == topic for p in t["partitions"]}

    assert committed() == {0: "100", 1: "100", 2: "100"}
    # OffsetFetch of several groups in one request (v8+), one of them unknown; then of one partition
    def fetched(groups):
        return [(g["groupId"], [(t["name"], [p["partitionIndex"] for p in t["partitions"]]) for t in g["topics"]])
                for g in d.admin("listConsumerGroupOffsets", {"groups": groups})]

    assert fetched([group, f"{group}-none"]) == [(group, [(topic, [0, 1, 2])]), (f"{group}-none", [])]
    assert fetched([{"groupId": group, "topics": [{"name": topic, "partitionIndexes": [1]}]}]) == [(group, [(topic, [1])])]
    d.admin("alterConsumerGroupOffsets", {"groupId": group, "topics": [{"name": topic, "partitionOffsets": [
        {"partition": 1, "offset": big(40)}, {"partition": 3, "offset": big(100)}]}]})
    assert committed() == {0: "100", 1: "40", 2: "100", 3: "100"}
    d.admin("deleteConsumerGroupOffsets", {"groupId": group, "topics": [{"name": topic, "partitionIndexes": [2]}]})
    assert committed() == {0: "100", 1: "40", 3: "100"}
    d.admin("deleteGroups", {"groups": [group]})
    assert group not in d.admin("listGroups")
    d.admin("deleteTopics", {"topics": [topic]})
    assert topic not in d.admin("listTopics")


@pytest.mark.parametrize("client", ["platformatic-kafka"])
def test_platformatic_deletes_offsets_of_a_topic_its_active_group_does_not_read(request, bootstrap, client):
    """OffsetDelete on a group with a member: Kafka deletes the offsets of a topic no member
    subscribes to and refuses those of a subscribed one with GROUP_SUBSCRIBED_TO_TOPIC."""
    d = make_driver(request, client, bootstrap)
    read, other, group = unique("plt-od-read"), unique("plt-od-other"), unique("plt-od-group")
    for topic in (read, other):
        d.admin("createTopics", {"topics": [topic], "partitions": 1, "replicas": 1})
        fill(d, topic, 1, 20)
    d.admin("alterConsumerGroupOffsets", {"groupId": group, "topics": [
        {"name": other, "partitionOffsets": [{"partition": 0, "offset": big(7)}]}]})
    member = d.member(read, group)
    try:
        wait_state(member, lambda s: s["assignment"] == [0] and len(s["values"]) == 20, what="the member reads")
        with pytest.raises(NodeError) as refused:
            d.admin("deleteConsumerGroupOffsets", {"groupId": group, "topics": [{"name": read, "partitionIndexes": [0]}]})
        assert refused.value.kafka_errors() == {"GROUP_SUBSCRIBED_TO_TOPIC"}, refused.value.text()
        d.admin("deleteConsumerGroupOffsets", {"groupId": group, "topics": [{"name": other, "partitionIndexes": [0]}]})
        (g,) = d.admin("listConsumerGroupOffsets", {"groups": [group]})
        assert other not in {t["name"] for t in g["topics"]}
    finally:
        member.close()
