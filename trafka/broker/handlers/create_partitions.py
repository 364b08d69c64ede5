"""CreatePartitions (key 37), versions 0-3.

Behavior:
- Grows a topic to `count` partitions; the new ones start empty at offset 0.
- Assignments, when given, must name only this broker (INVALID_REPLICA_ASSIGNMENT); in a
  simulated cluster, one existing broker each (the controller keeps them).
- A count not above the current one is INVALID_PARTITIONS, as in Kafka.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.cluster.describe import assign, assignment_problem
from trafka.broker.security.authorizer import TOPIC, Op, authorize
from trafka.broker.requests.errors import error_code, error_message
from trafka.storage.errors import StorageError, UnknownTopic
from trafka.wire.errors import ErrorCode


def result(name: str, error: ErrorCode = ErrorCode.NONE, message: str | None = None) -> dict:
    return {"name": name, "error_code": error, "error_message": message}


def _create(broker, t, validate_only: bool) -> dict:
    try:
        topic = broker.logs.topic(t.name)
    except UnknownTopic:
        return result(t.name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {t.name} does not exist")
    if t.count <= topic.partitions:
        return result(t.name, ErrorCode.INVALID_PARTITIONS, f"topic {t.name} has {topic.partitions} partitions; the new count must be larger")
    if t.assignments is not None:
        if len(t.assignments) != t.count - topic.partitions:
            return result(t.name, ErrorCode.INVALID_REPLICA_ASSIGNMENT, "one assignment per new partition")
        for a in t.assignments:
            problem = assignment_problem(broker, a.broker_ids)
            if problem is not None:
                return result(t.name, ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem)
    if validate_only:
        return result(t.name)
    try:
        old = topic.partitions
        broker.logs.create_partitions(t.name, t.count)
    except (StorageError, OSError) as exc:
        return result(t.name, error_code(exc), error_message(exc))
    assign(broker, topic.topic_id, {old + i: list(a.broker_ids) for i, a in enumerate(t.assignments or ())})
    return result(t.name)


@routes.handles(37, min_version=0, max_version=3)
async def handle(ctx, request):
    return {"throttle_time_ms": 0, "results": [
        _create(ctx.broker, t, request.validate_only) if authorize(ctx, Op.ALTER, TOPIC, t.name)
        else result(t.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for t in request.topics]}
