"""InitProducerId (key 22), versions 0-5 (v6 is declared; Kafka 4.3 marks it unstable and does
not advertise it, nor does trafka).

Behavior:
- Idempotent producers (no transactional id) get a fresh producer id with epoch 0 on every
  call, whatever id and epoch they name, as Kafka's TransactionCoordinator answers (an
  idempotent producer bumps its epoch client-side). Echoing a named id handed one id to every
  producer that named (0, 0), and their records were dropped as duplicates.
- v3+ names a producer id and epoch both or neither (-1, -1), else INVALID_REQUEST (KafkaApis).
- A transactional id goes to the transaction coordinator (trafka/broker/coordinators/transaction): the
  first call makes its producer id, each later one bumps the epoch and fences the previous
  producer, aborting its open transaction. transaction_timeout_ms above
  transaction.max.timeout.ms is INVALID_TRANSACTION_TIMEOUT.
- PRODUCER_FENCED exists from v4; older versions get INVALID_PRODUCER_EPOCH instead.
- v5 only adds the TRANSACTION_ABORTABLE error, which nothing here returns.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import CLUSTER, TOPIC, TRANSACTIONAL_ID, Op, authorize, authorize_any
from trafka.wire.errors import ErrorCode

FIRST_VERSION_WITH_PRODUCER_FENCED = 4


@routes.handles(22, min_version=0, max_version=5)
async def handle(ctx, request):
    current_id = request.producer_id
    current_epoch = request.producer_epoch
    if (current_id == -1) != (current_epoch == -1):
        return {"error_code": ErrorCode.INVALID_REQUEST, "producer_id": -1, "producer_epoch": -1}
    if request.transactional_id is not None:
        if not authorize(ctx, Op.WRITE, TRANSACTIONAL_ID, request.transactional_id):
            return {"error_code": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "producer_id": -1, "producer_epoch": -1}
        error, producer_id, epoch = ctx.broker.txn_coordinator.init_producer_id(
            request.transactional_id, request.transaction_timeout_ms, current_id, current_epoch
        )
        if error == ErrorCode.PRODUCER_FENCED and ctx.version < FIRST_VERSION_WITH_PRODUCER_FENCED:
            error = ErrorCode.INVALID_PRODUCER_EPOCH
        return {"error_code": error, "producer_id": producer_id, "producer_epoch": epoch}
    # An idempotent producer: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic (Kafka 4).
    if not (authorize(ctx, Op.IDEMPOTENT_WRITE, CLUSTER, log_denied=False) or authorize_any(ctx, Op.WRITE, TOPIC)):
        return {"error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "producer_id": -1, "producer_epoch": -1}
    return {"error_code": ErrorCode.NONE, "producer_id": ctx.broker.producer_ids.next_id(), "producer_epoch": 0}
