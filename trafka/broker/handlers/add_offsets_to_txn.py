"""AddOffsetsToTxn (key 25), versions 0-4.

Behavior:
- Adds the group's `__consumer_offsets` partition to the producer's transaction, so the
  transaction's end writes its marker there and the group's TxnOffsetCommit offsets become
  visible (or are dropped). Errors as AddPartitionsToTxn.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import GROUP, TRANSACTIONAL_ID, Op, authorize
from trafka.wire.errors import ErrorCode

FIRST_VERSION_WITH_PRODUCER_FENCED = 2


@routes.handles(25, min_version=0, max_version=4)
async def handle(ctx, request):
    if not authorize(ctx, Op.WRITE, TRANSACTIONAL_ID, request.transactional_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
    if not authorize(ctx, Op.READ, GROUP, request.group_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED}
    error = ctx.broker.txn_coordinator.add_offsets(
        request.transactional_id, request.producer_id, request.producer_epoch, request.group_id,
        version_fenced=ctx.version >= FIRST_VERSION_WITH_PRODUCER_FENCED,
    )
    return {"throttle_time_ms": 0, "error_code": error}
