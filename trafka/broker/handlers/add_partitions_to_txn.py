"""AddPartitionsToTxn (key 24), versions 0-5.

Behavior:
- Adds the partitions to the producer's transaction (Empty/Complete* -> Ongoing), written to
  `__transaction_state` before the answer. Kafka's errors: INVALID_PRODUCER_ID_MAPPING for an
  unknown id or producer, PRODUCER_FENCED (v2+; INVALID_PRODUCER_EPOCH before) for an old
  epoch, CONCURRENT_TRANSACTIONS while the previous transaction completes.
- An unknown partition is UNKNOWN_TOPIC_OR_PARTITION and every other partition of the request
  OPERATION_NOT_ATTEMPTED, as in Kafka.
- v4+ is what a broker sends its transaction coordinator (KIP-890 part 1): several
  transactions, each added as above or, with verify_only, only checked: NONE for a partition
  of the producer's Ongoing transaction, INVALID_TXN_STATE for one outside it. On one broker
  nobody needs to send it (Produce verifies in process); it is answered for tools that do.
  As in Kafka it needs CLUSTER_ACTION on the cluster (else CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import CLUSTER, TOPIC, TRANSACTIONAL_ID, Op, authorize, denied
from trafka.wire.errors import ErrorCode

FIRST_VERSION_WITH_PRODUCER_FENCED = 2
FIRST_BATCHED_VERSION = 4


def _topic_results(topics, errors) -> list[dict]:
    return [
        {
            "name": t.name,
            "results_by_partition": [{"partition_index": p, "partition_error_code": errors[(t.name, p)]} for p in t.partitions],
        }
        for t in topics
    ]


def _add(ctx, transactional_id: str, producer_id: int, producer_epoch: int, topics, *, version_fenced: bool) -> dict:
    wanted = [(t.name, p) for t in topics for p in t.partitions]
    refused = {t.name for t in topics if not authorize(ctx, Op.WRITE, TOPIC, t.name)}
    if refused:  # nothing is added; the others are OPERATION_NOT_ATTEMPTED, as in Kafka
        return {(name, p): ErrorCode.TOPIC_AUTHORIZATION_FAILED if name in refused else ErrorCode.OPERATION_NOT_ATTEMPTED
                for name, p in wanted}
    return ctx.broker.txn_coordinator.add_partitions(
        transactional_id, producer_id, producer_epoch, wanted, version_fenced=version_fenced
    )


def _verify(ctx, txn) -> dict:
    coordinator = ctx.broker.txn_coordinator
    return {
        (t.name, p): coordinator.verify_produce(txn.transactional_id, txn.producer_id, txn.producer_epoch, t.name, p)
        for t in txn.topics for p in t.partitions
    }


@routes.handles(24, min_version=0, max_version=5)
async def handle(ctx, request):
    if ctx.version >= FIRST_BATCHED_VERSION:
        if not authorize(ctx, Op.CLUSTER_ACTION, CLUSTER):
            return {"throttle_time_ms": 0, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "results_by_transaction": []}
        results = []
        for txn in request.transactions:
            errors = _verify(ctx, txn) if txn.verify_only else _add(
                ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch, txn.topics, version_fenced=True
            )
            results.append({"transactional_id": txn.transactional_id, "topic_results": _topic_results(txn.topics, errors)})
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "results_by_transaction": results}
    transactional_id = request.v3_and_below_transactional_id
    if not authorize(ctx, Op.WRITE, TRANSACTIONAL_ID, transactional_id):
        return denied(ctx, request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    topics = request.v3_and_below_topics
    errors = _add(
        ctx, transactional_id, request.v3_and_below_producer_id, request.v3_and_below_producer_epoch, topics,
        version_fenced=ctx.version >= FIRST_VERSION_WITH_PRODUCER_FENCED,
    )
    return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": _topic_results(topics, errors)}
