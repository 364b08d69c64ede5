"""DescribeProducers (key 61), version 0.

Behavior:
- Per partition, every producer the partition's producer state holds (idempotent and
  transactional): id, epoch, last sequence, last batch timestamp, and the first offset of its
  open transaction (current_txn_start_offset, -1 when none), as Kafka's ProducerStateManager
  reports them. coordinator_epoch is -1: one broker, never a coordinator fail-over.
- Unknown partitions: UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import TOPIC, Op, authorize
from trafka.broker.requests.topics import find_log, led_elsewhere
from trafka.wire.errors import ErrorCode


def _partition(broker, topic: str, index: int) -> dict:
    if led_elsewhere(broker, topic, index):
        return {"partition_index": index, "error_code": ErrorCode.NOT_LEADER_OR_FOLLOWER, "error_message": None,
                "active_producers": []}
    log_ = find_log(broker, topic, index)
    if log_ is None:
        return {"partition_index": index, "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "error_message": None,
                "active_producers": []}
    producers = []
    for entry in sorted(log_.producer_state.producers.values(), key=lambda e: e.producer_id):
        last = entry.batches[-1] if entry.batches else None
        producers.append({
            "producer_id": entry.producer_id,
            "producer_epoch": entry.producer_epoch,
            "last_sequence": last.last_seq if last else -1,
            "last_timestamp": last.timestamp if last else -1,
            "coordinator_epoch": -1,
            "current_txn_start_offset": entry.current_txn_first_offset,
        })
    return {"partition_index": index, "error_code": ErrorCode.NONE, "error_message": None, "active_producers": producers}


@routes.handles(61, min_version=0, max_version=0)
async def handle(ctx, request):
    return {
        "throttle_time_ms": 0,
        "topics": [
            {"name": t.name, "partitions": [_partition(ctx.broker, t.name, i) for i in t.partition_indexes]}
            if authorize(ctx, Op.READ, TOPIC, t.name) else
            {"name": t.name, "partitions": [{"partition_index": i, "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                                             "error_message": None, "active_producers": []} for i in t.partition_indexes]}
            for t in request.topics
        ],
    }
