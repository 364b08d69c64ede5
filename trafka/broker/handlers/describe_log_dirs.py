"""DescribeLogDirs (key 35), versions 1-5 (v5: is_cordoned, always false: trafka has no
cordoning of log directories).

Behavior:
- One log directory, the data dir (its absolute path), as a one-node Kafka with one entry in
  log.dirs answers: every partition asked for (all of them when topics is null) with the bytes
  of its segments; offset lag 0 (one replica, the high watermark is the log end offset), never
  a future log (AlterReplicaLogDirs has no second directory to move to).
- Partitions that do not exist are left out, as in Kafka.
- v4: the directory's total and usable bytes, from the file system.
"""

from __future__ import annotations

import shutil

from trafka.broker import registry
from trafka.broker.security.authorizer import CLUSTER, Op, authorize, denied
from trafka.wire.errors import ErrorCode


def _wanted(request) -> set[tuple[str, int]] | None:
    if request.topics is None:
        return None
    return {(t.topic, p) for t in request.topics for p in t.partitions}


@registry.handles(35, min_version=1, max_version=5)
async def handle(ctx, request):
    if not authorize(ctx, Op.DESCRIBE, CLUSTER):
        return denied(ctx, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    broker = ctx.broker
    wanted = _wanted(request)
    by_topic: dict[str, list[dict]] = {}
    for topic, partition, partition_log in sorted(broker.logs.logs(), key=lambda e: (e[0], e[1])):
        if wanted is not None and (topic, partition) not in wanted:
            continue
        by_topic.setdefault(topic, []).append({
            "partition_index": partition,
            "partition_size": partition_log.size_in_bytes,
            "offset_lag": 0,
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
