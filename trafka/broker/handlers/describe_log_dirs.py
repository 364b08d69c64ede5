"""DescribeLogDirs (key 35), versions 1-5 (v5: is_cordoned, always false: trafka has no
cordoning of log directories).

Behavior:
- One log directory, the data dir (its absolute path), as a one-node Kafka with one entry in
  log.dirs answers: every partition asked for (all of them when topics is null) with the bytes
  of its segments; offset lag 0 (one replica, the high watermark is the log end offset), never
  a future log (AlterReplicaLogDirs has no second directory to move to).
- Partitions that do not exist are left out, as in Kafka. Each broker lists the replicas the
  controller placed on it (on one broker: all), a follower's offset lag being how far it is
  behind the leader's high watermark.
- v4: the directory's total and usable bytes, from the file system.
"""

from __future__ import annotations

import shutil

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import CLUSTER, Op, authorize, denied
from trafka.wire.errors import ErrorCode


def _wanted(request) -> set[tuple[str, int]] | None:
    if request.topics is None:
        return None
    return {(t.topic, p) for t in request.topics for p in t.partitions}


def _replicas(broker, wanted):
    """(topic, partition, log) of the replicas the controller places on this broker."""
    controller = broker.cluster.controller
    for name, metadata in list(broker.logs.topics.items()):
        for p in range(metadata.partitions):
            if (wanted is None or (name, p) in wanted) and broker.node_id in controller.replicas(metadata.topic_id, p):
                yield name, p, broker.logs.log(name, p)


def _lag(broker, topic: str, partition: int, partition_log) -> int:
    """Kafka's offset lag: how far this replica's log end is behind the high watermark (a
    follower's; 0 on the leader)."""
    leader = broker.cluster.leader_node(topic, partition)
    if leader is None or leader is broker:
        return 0
    return max(leader.logs.log(topic, partition).high_watermark - partition_log.log_end_offset, 0)


@routes.handles(35, min_version=1, max_version=5)
async def handle(ctx, request):
    if not authorize(ctx, Op.DESCRIBE, CLUSTER):
        return denied(ctx, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    broker = ctx.broker
    wanted = _wanted(request)
    by_topic: dict[str, list[dict]] = {}
    for topic, partition, partition_log in sorted(_replicas(broker, wanted), key=lambda e: (e[0], e[1])):
        by_topic.setdefault(topic, []).append({
            "partition_index": partition,
            "partition_size": partition_log.size_in_bytes,
            "offset_lag": _lag(broker, topic, partition, partition_log),
            "is_future_key": False,
        })
    log_dir = broker.data_dir.resolve()
    usage = shutil.disk_usage(log_dir)
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "results": [{
            "error_code": ErrorCode.NONE,
            "log_dir": str(log_dir),
            "topics": [{"name": name, "partitions": partitions} for name, partitions in by_topic.items()],
            "total_bytes": usage.total,
            "usable_bytes": usage.free,
        }],
    }
