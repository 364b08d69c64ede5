"""ListPartitionReassignments (key 46), version 0.

Behavior:
- One node: a reassignment it accepts (to this node, AlterPartitionReassignments) is complete
  at once, so none is ever in progress and the answer lists no partitions, as Kafka's
  controller answers when nothing is moving.
- In a simulated cluster: each reassignment under way, with its replicas (target first, then
  those being removed), adding and removing replicas.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import CLUSTER, Op, authorize, denied
from trafka.wire.errors import ErrorCode


@routes.handles(46, min_version=0, max_version=0)
async def handle(ctx, request):
    if not authorize(ctx, Op.DESCRIBE, CLUSTER):
        return denied(ctx, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None,
            "topics": _under_way(ctx.broker, request.topics)}


def _under_way(broker, asked) -> list[dict]:
    """A simulated cluster's reassignments under way (the asked partitions, or all)."""
    cluster = broker.cluster
    wanted = None if asked is None else {(t.name, p) for t in asked for p in t.partition_indexes}
    topics = []
    for name, metadata in sorted(broker.logs.topics.items()):
        partitions = []
        for p in range(metadata.partitions):
            under_way = cluster.controller.reassignment(metadata.topic_id, p)
            if under_way is None or (wanted is not None and (name, p) not in wanted):
                continue
            target, before = under_way
            partitions.append({"partition_index": p, "replicas": list(cluster.controller.replicas(metadata.topic_id, p)),
                               "adding_replicas": [r for r in target if r not in before],
                               "removing_replicas": [r for r in before if r not in target]})
        if partitions:
            topics.append({"name": name, "partitions": partitions})
    return topics
