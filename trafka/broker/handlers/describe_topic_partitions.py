"""DescribeTopicPartitions (key 75), version 0.

Behavior:
- Kafka's paging (KIP-966): the topics asked for (all of them for an empty list) in name order,
  from the cursor's topic and partition on, at most response_partition_limit partitions (capped at
  Kafka's max.request.partition.size.limit default, 2000); next_cursor names the first partition
  left out, null when everything was answered. A cursor naming a topic that was not asked for is
  INVALID_REQUEST for every topic, as Kafka's error response gives.
- The controller's leaders, replicas and ISRs (one broker leads every partition, its only
  replica and ISR); no eligible leader replicas (trafka has no ELR).
- ACLs: a named topic the caller may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED, left out of a
  listing; each topic answers its authorized operations, as Kafka does.
- A topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION with no partitions (never auto-created).
"""

from __future__ import annotations

from trafka.broker.coordinators.runtime.internal_topic import INTERNAL_TOPICS
from trafka.broker.requests import routes
from trafka.broker.security.authorizer import TOPIC, Op, authorize, authorized_operations
from trafka.storage.errors import UnknownTopic
from trafka.wire.errors import ErrorCode
from trafka.wire.types import ZERO_UUID

MAX_PARTITIONS = 2000  # Kafka's max.request.partition.size.limit default


def _partition(broker, topic, index: int) -> dict:
    """The partition's leader, replicas and ISR, the controller's (the same entry Metadata gives)."""
    state = broker.cluster.controller.partition(topic.topic_id, index)
    return {"error_code": ErrorCode.NONE if state.leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE,
            "partition_index": index, "leader_id": state.leader, "leader_epoch": state.leader_epoch,
            "replica_nodes": list(state.replicas), "isr_nodes": list(state.isr), "eligible_leader_replicas": [],
            "last_known_elr": [],
            "offline_replicas": [r for r in state.replicas if r not in broker.cluster.controller.alive]}


@routes.handles(75, min_version=0, max_version=0)
async def handle(ctx, request):
    broker = ctx.broker
    names = sorted({t.name for t in request.topics} if request.topics else broker.logs.list_topics())
    cursor = request.cursor
    if cursor is not None and request.topics and cursor.topic_name not in names:
        # Kafka fails the whole request: its error response gives each topic asked for the error.
        return {"throttle_time_ms": 0, "next_cursor": None, "topics": [
            {"error_code": ErrorCode.INVALID_REQUEST, "name": name, "topic_id": ZERO_UUID, "partitions": []}
            for name in names
        ]}
    budget = max(1, min(request.response_partition_limit, MAX_PARTITIONS))
    topics, next_cursor = [], None
    for name in names:
        if cursor is not None and name < cursor.topic_name:
            continue
        first = cursor.partition_index if cursor is not None and name == cursor.topic_name else 0
        if not authorize(ctx, Op.DESCRIBE, TOPIC, name, log_denied=bool(request.topics)):
            if request.topics:  # named topics are refused; the rest are left out of a listing
                topics.append({"error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "name": name, "topic_id": ZERO_UUID,
                               "partitions": []})
            continue
        try:
            topic = broker.logs.topic(name)
        except UnknownTopic:
            topics.append({"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "name": name, "topic_id": ZERO_UUID,
                           "partitions": []})
            continue
        if budget == 0:
            next_cursor = {"topic_name": name, "partition_index": first}
            break
        last = min(topic.partitions, first + budget)
        topics.append({"error_code": ErrorCode.NONE, "name": name, "topic_id": topic.topic_id,
                       "is_internal": name in INTERNAL_TOPICS,
                       "topic_authorized_operations": authorized_operations(ctx, TOPIC, name),
                       "partitions": [_partition(broker, topic, i) for i in range(first, last)]})
        budget -= last - first
        if last < topic.partitions:
            next_cursor = {"topic_name": name, "partition_index": last}
            break
    return {"throttle_time_ms": 0, "topics": topics, "next_cursor": next_cursor}
