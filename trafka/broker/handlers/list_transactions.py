"""ListTransactions (key 66), versions 0-2.

Behavior:
- Every transactional id the coordinator knows (one broker holds every `__transaction_state`
  partition), filtered by state names (Kafka's: Empty, Ongoing, PrepareCommit, ...), producer
  ids, v1's duration (only transactions open longer than it) and v2's transactional id
  pattern (a regular expression matching the whole id). Unknown state names come back in
  unknown_state_filters, as in Kafka.
- The pattern is a Python regular expression (Kafka's is Java's; they agree on common
  syntax); one that does not compile is INVALID_REGULAR_EXPRESSION.
"""

from __future__ import annotations

import re

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import TRANSACTIONAL_ID, Op, authorize
from trafka.broker.coordinators.transaction.formats import TxnState
from trafka.wire.errors import ErrorCode

KNOWN_STATES = {s.kafka_name for s in TxnState}


@routes.handles(66, min_version=0, max_version=2)
async def handle(ctx, request):
    states = set(request.state_filters)
    unknown = sorted(states - KNOWN_STATES)
    pattern = request.transactional_id_pattern
    try:
        compiled = re.compile(pattern) if pattern else None
    except re.error:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.INVALID_REGULAR_EXPRESSION,
                "unknown_state_filters": unknown, "transaction_states": []}
    duration = request.duration_filter
    now = ctx.broker.clock.timer_ms()  # as the coordinator's transaction start times
    found = ctx.broker.txn_coordinator.list(states & KNOWN_STATES if states else None, set(request.producer_id_filters))
    if states and not states & KNOWN_STATES:
        found = []
    listed = [
        {"transactional_id": t.transactional_id, "producer_id": t.producer_id, "transaction_state": t.state.kafka_name}
        for t in sorted(found, key=lambda t: t.transactional_id)
        if (compiled is None or compiled.fullmatch(t.transactional_id))
        and (duration < 0 or (t.start_ms >= 0 and now - t.start_ms > duration))
        and authorize(ctx, Op.DESCRIBE, TRANSACTIONAL_ID, t.transactional_id, log_denied=False)
    ]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "unknown_state_filters": unknown, "transaction_states": listed}
