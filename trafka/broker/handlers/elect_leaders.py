"""ElectLeaders (key 43), versions 0-2.

Behavior:
- Elections are the controller's: preferred moves leadership back to the first replica when it
  is a live in-sync one (else PREFERRED_LEADER_NOT_AVAILABLE); unclean gives an offline
  partition its first live replica, in sync or not (else ELIGIBLE_LEADERS_NOT_AVAILABLE); a
  partition that needs neither is ELECTION_NOT_NEEDED (on one broker, every partition: it leads
  them all), one that does not exist UNKNOWN_TOPIC_OR_PARTITION, as Kafka's controller answers.
- topic_partitions null (every partition): only the partitions elected or failing, because
  Kafka leaves out those that needed no election when it was not asked for them by name.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import CLUSTER, Op, authorize, denied
from trafka.storage.errors import UnknownTopic
from trafka.wire.errors import ErrorCode

PREFERRED, UNCLEAN = 0, 1


def _partition_result(broker, topic: str, partition: int, election_type: int) -> dict:
    try:
        exists = 0 <= partition < broker.logs.topic(topic).partitions
    except UnknownTopic:
        exists = False
    if not exists:
        return {"partition_id": partition, "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                "error_message": f"The partition {topic}-{partition} does not exist."}
    elect = broker.cluster.elect_preferred if election_type == PREFERRED else broker.cluster.elect_unclean
    try:
        if elect(topic, partition) is not None:
            return {"partition_id": partition, "error_code": ErrorCode.NONE, "error_message": None}
    except ValueError as exc:
        error = ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE if election_type == PREFERRED else ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
        return {"partition_id": partition, "error_code": error, "error_message": str(exc)}
    return {"partition_id": partition, "error_code": ErrorCode.ELECTION_NOT_NEEDED,
            "error_message": "Leader election not needed for topic partition."}


def _every_partition(broker, election_type: int) -> list[dict]:
    """topic_partitions null: every partition, and only those elected or failing in the answer."""
    results = []
    for name, metadata in sorted(broker.logs.topics.items()):
        found = [r for r in (_partition_result(broker, name, p, election_type) for p in range(metadata.partitions))
                 if r["error_code"] != ErrorCode.ELECTION_NOT_NEEDED]
        if found:
            results.append({"topic": name, "partition_result": found})
    return results


@routes.handles(43, min_version=0, max_version=2)
async def handle(ctx, request):
    if not authorize(ctx, Op.ALTER, CLUSTER):
        return denied(ctx, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    if request.election_type not in (PREFERRED, UNCLEAN):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.INVALID_REQUEST, "replica_election_results": []}
    if request.topic_partitions is None:
        results = _every_partition(ctx.broker, request.election_type)
    else:
        results = [
            {"topic": t.topic, "partition_result": [_partition_result(ctx.broker, t.topic, p, request.election_type)
                                                    for p in t.partitions]}
            for t in request.topic_partitions or []
        ]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "replica_election_results": results}
