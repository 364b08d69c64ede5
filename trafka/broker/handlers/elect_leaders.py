"""ElectLeaders (key 43), versions 0-2.

Behavior:
- One node is the leader and only replica of every partition, so no election is ever needed,
  preferred or unclean: each named partition is ELECTION_NOT_NEEDED, a partition that does not
  exist UNKNOWN_TOPIC_OR_PARTITION, as Kafka's controller answers.
- topic_partitions null (every partition): an empty result, because Kafka leaves out the
  partitions that needed no election when it was not asked for them by name.
"""

from __future__ import annotations

from trafka.broker import registry
from trafka.broker.security.authorizer import CLUSTER, Op, authorize, denied
from trafka.storage.errors import UnknownTopic
from trafka.wire.errors import ErrorCode

PREFERRED, UNCLEAN = 0, 1


def _partition_result(broker, topic: str, partition: int) -> dict:
    try:
        exists = 0 <= partition < broker.logs.topic(topic).partitions
    except UnknownTopic:
        exists = False
    if not exists:
        return {"partition_id": partition, "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                "error_message": f"The partition {topic}-{partition} does not exist."}
    return {"partition_id": partition, "error_code": ErrorCode.ELECTION_NOT_NEEDED,
            "error_message": "Leader election not needed for topic partition."}


@registry.handles(43, min_version=0, max_version=2)
async def handle(ctx, request):
    if not authorize(ctx, Op.ALTER, CLUSTER):
        return denied(ctx, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    if request.election_type not in (PREFERRED, UNCLEAN):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.INVALID_REQUEST, "replica_election_results": []}
    results = [
        {"topic": t.topic, "partition_result": [_partition_result(ctx.broker, t.topic, p) for p in t.partitions]}
        for t in request.topic_partitions or []
    ]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "replica_election_results": results}
