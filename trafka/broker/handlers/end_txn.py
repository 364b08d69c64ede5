"""EndTxn (key 26), versions 0-5.

Behavior:
- Commit or abort: PrepareCommit/PrepareAbort is written to `__transaction_state`, a
  COMMIT/ABORT marker to every partition of the transaction, then CompleteCommit/CompleteAbort;
  the answer comes after all of them (Kafka answers after the Prepare* record and writes the
  markers afterwards; on one broker they are local appends, so we finish first).
- A retry of an EndTxn that already completed the same way succeeds; the other way, or with
  no transaction open, is INVALID_TXN_STATE. Fencing errors as AddPartitionsToTxn.
- v5 is the transaction version 2 request (KIP-890 part 2), sent by clients that see
  transaction.version 2 finalized (Java 4.x): the commit/abort bumps the producer epoch (and
  takes a new producer id when the epoch is exhausted), the markers carry the new epoch, and
  the response names the producer id and epoch to use next. A retry after completion (the
  epoch before the bump) is NONE with the current id and epoch; an abort with nothing added is
  allowed. A transaction begun under version 0 (AddPartitionsToTxn) is finished without a bump
  even by v5 (trafka/broker/coordinators/transaction/coordinator.py). v0-4 answer as before.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import TRANSACTIONAL_ID, Op, authorize
from trafka.wire.errors import ErrorCode

FIRST_VERSION_WITH_PRODUCER_FENCED = 2
FIRST_TRANSACTION_V2_VERSION = 5


@routes.handles(26, min_version=0, max_version=5)
async def handle(ctx, request):
    if not authorize(ctx, Op.WRITE, TRANSACTIONAL_ID, request.transactional_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
    if ctx.version >= FIRST_TRANSACTION_V2_VERSION:
        error, producer_id, producer_epoch = ctx.broker.txn_coordinator.end_transaction_v2(
            request.transactional_id, request.producer_id, request.producer_epoch, request.committed
        )
        ctx.broker.notify_data_arrived()
        return {"throttle_time_ms": 0, "error_code": error, "producer_id": producer_id, "producer_epoch": producer_epoch}
    error = ctx.broker.txn_coordinator.end_transaction(
        request.transactional_id, request.producer_id, request.producer_epoch, request.committed,
        version_fenced=ctx.version >= FIRST_VERSION_WITH_PRODUCER_FENCED,
    )
    ctx.broker.notify_data_arrived()  # the markers move last stable offsets: wake read_committed fetches
    if error:
        return {"throttle_time_ms": 0, "error_code": error}
    return {"throttle_time_ms": 0, "error_code": error, "producer_id": request.producer_id, "producer_epoch": request.producer_epoch}
