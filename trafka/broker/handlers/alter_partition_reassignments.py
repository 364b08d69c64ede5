"""AlterPartitionReassignments (key 45), versions 0-1.

Behavior:
- A reassignment is the controller's (trafka/broker/cluster/nodes.py `reassign`): the new replicas
  fetch from the leader, and once all are in sync the old ones are dropped (their copies deleted)
  and leadership moves if the leader is not among the new replicas. Null replicas cancel the
  move under way (NO_REASSIGNMENT_IN_PROGRESS when none is). Changing the replication factor is
  allowed. A replica list naming a broker the cluster does not have is INVALID_REPLICA_ASSIGNMENT
  (no such broker is registered), as is an empty or repeated list, as Kafka's controller answers;
  on one broker, reassigning to exactly that broker is accepted and complete at once. A
  partition that does not exist is UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import CLUSTER, Op, authorize, denied
from trafka.storage.errors import UnknownTopic
from trafka.wire.errors import ErrorCode


def _partition(broker, topic: str, partition) -> dict:
    def answer(error: ErrorCode = ErrorCode.NONE, message: str | None = None) -> dict:
        return {"partition_index": partition.partition_index, "error_code": error, "error_message": message}

    try:
        exists = 0 <= partition.partition_index < broker.logs.topic(topic).partitions
    except UnknownTopic:
        exists = False
    if not exists:
        return answer(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The partition {topic}-{partition.partition_index} does not exist.")
    replicas = partition.replicas
    try:
        broker.cluster.reassign(topic, partition.partition_index, None if replicas is None else list(replicas))
    except LookupError:
        return answer(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, "No ongoing reassignment for this partition.")
    except ValueError as exc:
        return answer(ErrorCode.INVALID_REPLICA_ASSIGNMENT, str(exc))
    return answer()


@routes.handles(45, min_version=0, max_version=1)
async def handle(ctx, request):
    if not authorize(ctx, Op.ALTER, CLUSTER):
        return denied(ctx, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    return {
        "throttle_time_ms": 0,
        "allow_replication_factor_change": request.allow_replication_factor_change,
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "responses": [
            {"name": t.name, "partitions": [_partition(ctx.broker, t.name, p) for p in t.partitions]}
            for t in request.topics
        ],
    }
