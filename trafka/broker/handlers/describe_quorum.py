"""DescribeQuorum (key 55), versions 0-2.

Behavior:
- A one-node KRaft cluster's quorum: this node is the only voter and the leader of
  `__cluster_metadata`-0, with no observers, caught up now. The high watermark and the voter's
  log end offset are the end of trafka's metadata log (docs/metadata-log.md), which grows with
  each metadata record as Kafka's does; the leader epoch is 1 (there is no election).
- v2 lists this node's endpoints: the listeners it serves (it has no separate controller
  listener), and a zero directory id (trafka's data dir has no directory.id).
- Any other topic or partition: UNKNOWN_TOPIC_OR_PARTITION for it, as Kafka's Raft client answers.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import CLUSTER, Op, authorize, denied
from trafka.wire.errors import ErrorCode
from trafka.wire.types import ZERO_UUID

METADATA_TOPIC = "__cluster_metadata"
LEADER_EPOCH = 1


def _partition(broker, topic: str, partition: int, now: int) -> dict:
    if (topic, partition) != (METADATA_TOPIC, 0):
        return {"partition_index": partition, "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                "error_message": f"{topic}-{partition} is not the metadata partition",
                "leader_id": -1, "leader_epoch": -1, "high_watermark": -1, "current_voters": [], "observers": []}
    end = broker.metadata.end_offset  # every record in it is fsynced: committed
    voter = {"replica_id": broker.node_id, "replica_directory_id": ZERO_UUID, "log_end_offset": end,
             "last_fetch_timestamp": now, "last_caught_up_timestamp": now}
    return {"partition_index": 0, "error_code": ErrorCode.NONE, "error_message": None,
            "leader_id": broker.node_id, "leader_epoch": LEADER_EPOCH, "high_watermark": end,
            "current_voters": [voter], "observers": []}


@routes.handles(55, min_version=0, max_version=2)
async def handle(ctx, request):
    if not authorize(ctx, Op.DESCRIBE, CLUSTER):
        return denied(ctx, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    broker = ctx.broker
    now = broker.clock.time_ms()
    return {
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "topics": [
            {"topic_name": t.topic_name,
             "partitions": [_partition(broker, t.topic_name, p.partition_index, now) for p in t.partitions]}
            for t in request.topics
        ],
        "nodes": [{
            "node_id": broker.node_id,
            "listeners": [
                {"name": listener.name, "host": listener.advertised[0], "port": listener.advertised[1]}
                for listener in broker.listeners
            ],
        }],
    }
