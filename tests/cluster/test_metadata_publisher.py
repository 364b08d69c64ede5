"""Every broker applies what the metadata log says, in one place (cluster/publisher.py, Kafka's
metadata publisher over ReplicaManager.applyDelta): a topic deleted while a broker is stopped
goes everywhere, with the committed offsets and the share-partition state kept for it, and the
broker that starts again holds none of it; a topic made while a broker is stopped is there when
it starts. The cluster is driven only by requests, fetcher passes, stops and starts; what the
brokers hold is read afterwards. Before the publisher, a deleted topic's share-partition state
stayed in `__share_group_state` for good."""

from __future__ import annotations

import pytest
import trio
from testkit.cluster import call, replicate

from trafka.broker.cluster.nodes import Cluster
from trafka.broker.config import BrokerConfig
from trafka.wire import records as rec
from trafka.wire.errors import ErrorCode

SETTINGS = {"cluster.brokers": 3, "offsets.topic.num.partitions": 1, "transaction.state.log.num.partitions": 1,
            "share.coordinator.state.topic.num.partitions": 1}
STOPPED = 2


@pytest.fixture
def cluster(tmp_path):
    made = Cluster(tmp_path / "cluster", BrokerConfig.from_sources([f"{k}={v}" for k, v in SETTINGS.items()], []))
    yield made
    made.close()


async def create(node, topic: str) -> object:
    answer = await call(node, 19, 7, {"topics": [{"name": topic, "num_partitions": -1, "replication_factor": -1,
                                                  "assignments": [{"partition_index": 0, "broker_ids": [0, 1, 2]}],
                                                  "configs": []}], "timeout_ms": 10_000, "validate_only": False})
    assert answer["topics"][0]["error_code"] == ErrorCode.NONE, answer
    return answer["topics"][0]["topic_id"]


async def use(cluster, topic: str, topic_id) -> None:
    """Ten records, an offset committed by group `g`, and share group `s` fetching them (its
    share-partition's state written)."""
    leader = cluster.leader_node(topic, 0)
    data = rec.encode_batch([rec.Record(None, b"v%d" % i, (), 0) for i in range(10)])
    produced = await call(leader, 0, 8, {"transactional_id": None, "acks": 1, "timeout_ms": 10_000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": data}]}]})
    assert produced["responses"][0]["partition_responses"][0]["error_code"] == ErrorCode.NONE
    coordinator = cluster.leader_node("__consumer_offsets", 0)
    committed = await call(coordinator, 8, 2, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
                                               "retention_time_ms": -1, "topics": [{"name": topic, "partitions": [
                                                   {"partition_index": 0, "committed_offset": 7,
                                                    "committed_metadata": ""}]}]})
    assert committed["topics"][0]["partitions"][0]["error_code"] == ErrorCode.NONE
    joined = await call(coordinator, 76, 1, {"group_id": "s", "member_id": "m", "member_epoch": 0, "rack_id": None,
                                             "subscribed_topic_names": [topic]})
    assert joined["error_code"] == ErrorCode.NONE, joined
    fetched = await call(leader, 78, 1, {"group_id": "s", "member_id": "m", "share_session_epoch": 0, "max_wait_ms": 0,
                                         "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100, "batch_size": 100,
                                         "forgotten_topics_data": [], "topics": [{"topic_id": topic_id, "partitions": [
                                             {"partition_index": 0, "acknowledgement_batches": []}]}]})
    assert fetched["error_code"] == ErrorCode.NONE, fetched


async def committed_offset(cluster, topic: str) -> int:
    coordinator = cluster.leader_node("__consumer_offsets", 0)
    answer = await call(coordinator, 9, 5, {"group_id": "g", "topics": [{"name": topic, "partition_indexes": [0]}]})
    return answer["topics"][0]["partitions"][0]["committed_offset"]


def share_state_of(cluster, topic_id) -> list:
    """Every share-partition of the topic that a running broker holds, durable or in flight."""
    found = []
    for node in cluster.running_nodes():
        found += [k for shard in node.share_coordinator.runtime for k in shard.written if k.topic_id == topic_id]
        found += [k for k in node.share_coordinator.partitions if k.topic_id == topic_id]
    return found


def test_a_topic_deleted_while_a_broker_is_stopped_goes_with_its_offsets_and_share_state(cluster):
    async def scenario():
        topic_id = await create(cluster.node(0), "doomed")
        await use(cluster, "doomed", topic_id)
        replicate(cluster)
        assert share_state_of(cluster, topic_id) and await committed_offset(cluster, "doomed") == 7
        cluster.stop_broker(STOPPED)
        answer = await call(cluster.node(0), 20, 4, {"topic_names": ["doomed"], "timeout_ms": 10_000})
        assert answer["responses"][0]["error_code"] == ErrorCode.NONE
        kept = await create(cluster.node(0), "made-meanwhile")
        cluster.start_broker(STOPPED)
        replicate(cluster)
        for node in cluster.running_nodes():
            assert "doomed" not in node.logs.topics
            assert node.logs.topics["made-meanwhile"].topic_id == kept
        assert await committed_offset(cluster, "doomed") == -1
        assert share_state_of(cluster, topic_id) == []
        # The broker that was stopped leads the share state now: what it replays holds none of it.
        for internal in ("__share_group_state", "__consumer_offsets"):
            if cluster.leader_id(internal, 0) != STOPPED:
                cluster.move_leader(internal, 0, STOPPED)
        assert share_state_of(cluster, topic_id) == []
        assert await committed_offset(cluster, "doomed") == -1

    trio.run(scenario)
