"""ShareAcknowledge (key 79), versions 1-2: a share group member acknowledges records without
fetching (KIP-932). The session rules are ShareFetch's, except that epoch 0 is
INVALID_SHARE_SESSION_EPOCH (a new session has nothing to acknowledge); -1 acknowledges, then
closes the session (releasing what the member still holds; a group leave before it, as
confluent-kafka's close() sends, does not end the session). Per partition all or nothing: INVALID_RECORD_STATE for a record this member
does not hold; the acknowledgement is written to `__share_group_state` before it counts.
v2 (KIP-1222): with is_renew_ack, RENEW (type 4) locks records for another lock duration,
which the answer's acquisition_lock_timeout_ms gives."""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.coordinators.share.fetching import FINAL_EPOCH, Refused, acknowledge_all, responses, session_step
from trafka.wire.errors import ErrorCode


@routes.handles(79, min_version=1, max_version=2)
async def handle(ctx, request):
    def answer(error: ErrorCode, message: str | None = None, topics=()) -> dict:
        return {"throttle_time_ms": 0, "error_code": error, "error_message": message, "responses": list(topics),
                "acquisition_lock_timeout_ms": ctx.broker.share_coordinator.lock_ms(request.group_id or ""),
                "node_endpoints": []}
    try:
        session_step(ctx, request, fetching=False)
    except Refused as refused:
        return answer(refused.error, refused.message)
    acks = acknowledge_all(ctx, request)
    if request.share_session_epoch == FINAL_EPOCH:  # acknowledged first, then the session ends
        ctx.broker.share_coordinator.close_session(request.group_id, request.member_id)
    return answer(ErrorCode.NONE, topics=responses(ctx, {}, acks, fetching=False))
