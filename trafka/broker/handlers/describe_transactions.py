"""DescribeTransactions (key 65), version 0.

Behavior:
- Per transactional id: its state (Kafka's names: Empty, Ongoing, PrepareCommit, ...), timeout,
  start time (-1 with no transaction open), producer id and epoch, and the partitions of the
  open transaction. An unknown (or expired) id is TRANSACTIONAL_ID_NOT_FOUND, as in Kafka.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import TRANSACTIONAL_ID, Op, authorize
from trafka.wire.errors import ErrorCode


def _state(txn_coordinator, transactional_id: str) -> dict:
    txn = txn_coordinator.describe(transactional_id)
    if txn is None:
        return {
            "error_code": ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, "transactional_id": transactional_id,
            "transaction_state": "", "transaction_timeout_ms": 0, "transaction_start_time_ms": -1,
            "producer_id": -1, "producer_epoch": -1, "topics": [],
        }
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(txn.partitions):
        by_topic.setdefault(topic, []).append(partition)
    return {
        "error_code": ErrorCode.NONE,
        "transactional_id": transactional_id,
        "transaction_state": txn.state.kafka_name,
        "transaction_timeout_ms": txn.timeout_ms,
        "transaction_start_time_ms": txn.start_ms,
        "producer_id": txn.producer_id,
        "producer_epoch": txn.producer_epoch,
        "topics": [{"name": t, "partition_indexes": ps} for t, ps in by_topic.items()],
    }


@routes.handles(65, min_version=0, max_version=0)
async def handle(ctx, request):
    return {
        "throttle_time_ms": 0,
        "transaction_states": [
            _state(ctx.broker.txn_coordinator, t) if authorize(ctx, Op.DESCRIBE, TRANSACTIONAL_ID, t) else
            {"error_code": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "transactional_id": t, "transaction_state": "",
             "transaction_timeout_ms": 0, "transaction_start_time_ms": -1, "producer_id": -1, "producer_epoch": -1,
             "topics": []}
            for t in request.transactional_ids],
    }
