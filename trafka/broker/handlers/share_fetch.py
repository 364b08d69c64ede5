"""ShareFetch (key 78), versions 1-2: a share group member acknowledges records and acquires more
(KIP-932; trafka/broker/coordinators/share/).

Behavior:
- The share session: epoch 0 opens one on the partitions named (acknowledgements then are
  INVALID_REQUEST), later requests carry the next epoch (INVALID_SHARE_SESSION_EPOCH, or
  SHARE_SESSION_NOT_FOUND without a session) and may add partitions or forget them; -1
  acknowledges, then closes it (releasing what the member still holds). Leaving the group does
  not end the session; a closed connection does.
- Acknowledgements first, per partition all or nothing (INVALID_RECORD_STATE for a record this
  member does not hold), written to `__share_group_state` before they count.
- Then records are acquired for the member from each session partition for the group's
  share.record.lock.duration.ms: whole batches up to the one reaching max_records
  (batch_optimized), or never more than max_records (record_limit), and no new records while
  share.partition.max.record.locks are in flight; the answer has whole batches and the acquired
  offset runs with their delivery counts. A partition with nothing but an acknowledgement
  result or an error has empty records, never null; one led by another broker of a simulated
  cluster is NOT_LEADER_OR_FOLLOWER with its current leader and epoch. With nothing to acquire it waits up to max_wait_ms
  for new records or an expiring lock.
- v2 (KIP-1206, KIP-1222): share_acquire_mode 0 (batch_optimized) or 1 (record_limit); with
  is_renew_ack, RENEW (type 4) acknowledgements lock their records for another lock duration
  and the request acquires nothing new, answering at once; RENEW without it is INVALID_REQUEST.
- READ on the group (GROUP_AUTHORIZATION_FAILED for the request) and on each topic.
"""

from __future__ import annotations

import trio

from trafka.broker.requests import routes
from trafka.broker.coordinators.share.fetching import (FINAL_EPOCH, Refused, acknowledge_all, acquire_all, next_lock_deadline,
                                          responses, session_step)
from trafka.wire.errors import ErrorCode


def _answer(ctx, request, error: ErrorCode, message: str | None = None, topics=()) -> dict:
    return {"throttle_time_ms": 0, "error_code": error, "error_message": message,
            "acquisition_lock_timeout_ms": ctx.broker.share_coordinator.lock_ms(request.group_id or ""),
            "responses": list(topics), "node_endpoints": []}


@routes.handles(78, min_version=1, max_version=2)
async def handle(ctx, request):
    try:
        session = session_step(ctx, request, fetching=True)
    except Refused as refused:
        return _answer(ctx, request, refused.error, refused.message)
    acks = acknowledge_all(ctx, request)
    if request.share_session_epoch == FINAL_EPOCH:  # acknowledged first, then the session ends
        ctx.broker.share_coordinator.close_session(request.group_id, request.member_id)
    if request.share_session_epoch == FINAL_EPOCH or getattr(request, "is_renew_ack", False):
        return _answer(ctx, request, ErrorCode.NONE, topics=responses(ctx, {}, acks, fetching=True))
    broker = ctx.broker
    deadline = trio.current_time() + max(request.max_wait_ms, 0) / 1000
    max_records = request.max_records if request.max_records > 0 else 500
    while True:
        answers, acquired = acquire_all(ctx, request, session, max_records)
        if acquired or acks or trio.current_time() >= deadline or any(a.get("error_code") for a in answers.values()):
            break
        wake = deadline
        lock = next_lock_deadline(ctx, request, session)
        if lock is not None:
            wake = min(wake, trio.current_time() + max(lock - broker.clock.timer_ms(), 1) / 1000)
        with trio.move_on_at(wake):
            await broker.wait_for_data()
    return _answer(ctx, request, ErrorCode.NONE, topics=responses(ctx, answers, acks, fetching=True))
