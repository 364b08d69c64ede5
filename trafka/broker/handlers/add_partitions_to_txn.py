"""AddPartitionsToTxn (key 24), versions 0-3.

Behavior:
- Adds the partitions to the producer's transaction (Empty/Complete* -> Ongoing), written to
  `__transaction_state` before the answer. Kafka's errors: INVALID_PRODUCER_ID_MAPPING for an
  unknown id or producer, PRODUCER_FENCED (v2+; INVALID_PRODUCER_EPOCH before) for an old
  epoch, CONCURRENT_TRANSACTIONS while the previous transaction completes.
- An unknown partition is UNKNOWN_TOPIC_OR_PARTITION and every other partition of the request
  OPERATION_NOT_ATTEMPTED, as in Kafka.
- v4+ (broker-to-broker verification, KIP-890) is not served: there is one broker.
"""

from __future__ import annotations

from trafka.broker import registry
from trafka.broker.security.authorizer import TOPIC, TRANSACTIONAL_ID, Op, authorize, denied
from trafka.wire.errors import ErrorCode

FIRST_VERSION_WITH_PRODUCER_FENCED = 2


@registry.handles(24, min_version=0, max_version=3)
async def handle(ctx, request):
    if not authorize(ctx, Op.WRITE, TRANSACTIONAL_ID, request.transactional_id):
        return denied(ctx, request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    wanted = [(t.name, p) for t in request.topics for p in t.partitions]
    refused = {t.name for t in request.topics if not authorize(ctx, Op.WRITE, TOPIC, t.name)}
    if refused:  # nothing is added; the others are OPERATION_NOT_ATTEMPTED, as in Kafka
        errors = {(name, p): ErrorCode.TOPIC_AUTHORIZATION_FAILED if name in refused else ErrorCode.OPERATION_NOT_ATTEMPTED
                  for name, p in wanted}
    else:
        errors = ctx.broker.txn_coordinator.add_partitions(
            request.transactional_id, request.producer_id, request.producer_epoch, wanted,
            version_fenced=ctx.version >= FIRST_VERSION_WITH_PRODUCER_FENCED,
        )
    return {
        "throttle_time_ms": 0,
        "results_by_topic": [
            {
                "name": t.name,
                "results_by_partition": [
                    {"partition_index": p, "partition_error_code": errors[(t.name, p)]} for p in t.partitions
                ],
            }
            for t in request.topics
        ],
    }
