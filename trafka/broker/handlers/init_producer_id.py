"""InitProducerId (key 22), versions 0-4.

Behavior:
- Idempotent producers (no transactional id) get a fresh producer id with epoch 0.
- v3+ may name its current id and epoch to bump the epoch (KIP-360): the same id comes back
  with epoch + 1; at the largest epoch a new id is handed out instead.
- Transactional ids are refused (TRANSACTIONAL_ID_AUTHORIZATION_FAILED): trafka has no
  transaction coordinator.
"""

from __future__ import annotations

from trafka.broker import registry
from trafka.wire.errors import ErrorCode

MAX_EPOCH = 32766  # Kafka keeps Short.MaxValue - 1 as the last usable epoch


@registry.handles(22)
async def handle(ctx, request):
    if request.transactional_id is not None:
        return {"error_code": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "producer_id": -1, "producer_epoch": -1}
    ids = ctx.broker.producer_ids
    current_id = request.get("producer_id", -1)
    current_epoch = request.get("producer_epoch", -1)
    if current_id >= 0 and 0 <= current_epoch < MAX_EPOCH:
        return {"error_code": ErrorCode.NONE, "producer_id": current_id, "producer_epoch": current_epoch + 1}
    return {"error_code": ErrorCode.NONE, "producer_id": ids.next_id(), "producer_epoch": 0}
