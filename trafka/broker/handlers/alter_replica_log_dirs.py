"""AlterReplicaLogDirs (key 34), versions 1-2.

Behavior:
- trafka has one log directory, the data dir. Moving a replica to it is a no-op answered NONE,
  as Kafka answers a move to the directory a replica is already in; any other path is
  LOG_DIR_NOT_FOUND (not in log.dirs), and a partition this broker does not host
  REPLICA_NOT_AVAILABLE, as Kafka's ReplicaManager answers.
"""

from __future__ import annotations

from pathlib import Path

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import CLUSTER, Op, authorize
from trafka.storage.errors import UnknownTopic
from trafka.wire.errors import ErrorCode


def _error(broker, path: str, topic: str, partition: int) -> ErrorCode:
    if not Path(path).is_absolute() or Path(path).resolve() != broker.data_dir.resolve():
        return ErrorCode.LOG_DIR_NOT_FOUND
    try:
        hosted = 0 <= partition < broker.logs.topic(topic).partitions
    except UnknownTopic:
        hosted = False
    return ErrorCode.NONE if hosted else ErrorCode.REPLICA_NOT_AVAILABLE


@routes.handles(34, min_version=1, max_version=2)
async def handle(ctx, request):
    allowed = authorize(ctx, Op.ALTER, CLUSTER)  # else every partition is refused, as Kafka answers
    by_topic: dict[str, list[dict]] = {}
    for d in request.dirs:
        for t in d.topics:
            by_topic.setdefault(t.name, []).extend(
                {"partition_index": p, "error_code": _error(ctx.broker, d.path, t.name, p) if allowed
                 else ErrorCode.CLUSTER_AUTHORIZATION_FAILED} for p in t.partitions
            )
    return {
        "throttle_time_ms": 0,
        "results": [{"topic_name": name, "partitions": partitions} for name, partitions in by_topic.items()],
    }
