"""EndTxn (key 26), versions 0-5.

Behavior:
- Commit or abort: PrepareCommit/PrepareAbort is written to `__transaction_state`, a
  COMMIT/ABORT marker to every partition of the transaction, then CompleteCommit/CompleteAbort;
  the answer comes after all of them (Kafka answers after the Prepare* record and writes the
  markers afterwards; on one broker they are local appends, so we finish first).
- A retry of an EndTxn that already completed the same way succeeds; the other way, or with
  no transaction open, is INVALID_TXN_STATE. Fencing errors as AddPartitionsToTxn.
- v5 is the transaction version 2 request (KIP-890 part 2), which in Kafka bumps the epoch
  at every commit/abort. trafka finalizes transaction.version 0 (docs/transactions.md), so
  clients that follow the feature (Java 4.x, librdkafka) send v4 at most; a v5 request is
  served with version 0 semantics: no bump, and the response names the producer id and epoch
  the producer already holds, which are the ones to use next.
"""

from __future__ import annotations

from trafka.broker import registry
from trafka.broker.security.authorizer import TRANSACTIONAL_ID, Op, authorize
from trafka.wire.errors import ErrorCode

FIRST_VERSION_WITH_PRODUCER_FENCED = 2


@registry.handles(26, min_version=0, max_version=5)
async def handle(ctx, request):
    if not authorize(ctx, Op.WRITE, TRANSACTIONAL_ID, request.transactional_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
    error = ctx.broker.txn_coordinator.end_transaction(
        request.transactional_id, request.producer_id, request.producer_epoch, request.committed,
        version_fenced=ctx.version >= FIRST_VERSION_WITH_PRODUCER_FENCED,
    )
    ctx.broker.notify_data_arrived()  # the markers move last stable offsets: wake read_committed fetches
    if error:
        return {"throttle_time_ms": 0, "error_code": error}
    return {"throttle_time_ms": 0, "error_code": error, "producer_id": request.producer_id, "producer_epoch": request.producer_epoch}
