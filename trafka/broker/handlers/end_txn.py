"""EndTxn (key 26), versions 0-4.

Behavior:
- Commit or abort: PrepareCommit/PrepareAbort is written to `__transaction_state`, a
  COMMIT/ABORT marker to every partition of the transaction, then CompleteCommit/CompleteAbort;
  the answer comes after all of them (Kafka answers after the Prepare* record and writes the
  markers afterwards; on one broker they are local appends, so we finish first).
- A retry of an EndTxn that already completed the same way succeeds; the other way, or with
  no transaction open, is INVALID_TXN_STATE. Fencing errors as AddPartitionsToTxn.
- v5 (transaction version 2, an epoch bump per transaction) is not served.
"""

from __future__ import annotations

from trafka.broker import registry
from trafka.broker.security.authorizer import TRANSACTIONAL_ID, Op, authorize
from trafka.wire.errors import ErrorCode

FIRST_VERSION_WITH_PRODUCER_FENCED = 2


@registry.handles(26, min_version=0, max_version=4)
async def handle(ctx, request):
    if not authorize(ctx, Op.WRITE, TRANSACTIONAL_ID, request.transactional_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
    error = ctx.broker.txn_coordinator.end_transaction(
        request.transactional_id, request.producer_id, request.producer_epoch, request.committed,
        version_fenced=ctx.version >= FIRST_VERSION_WITH_PRODUCER_FENCED,
    )
    ctx.broker.notify_data_arrived()  # the markers move last stable offsets: wake read_committed fetches
    return {"throttle_time_ms": 0, "error_code": error}
