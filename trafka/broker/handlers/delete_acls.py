"""DeleteAcls (key 31), versions 1-3 (v0 left Kafka in 4.0).

Behavior:
- trafka has no authorizer yet (docs/security.md): every filter is answered SECURITY_DISABLED,
  as Kafka answers when `authorizer.class.name` is not set.
"""

from __future__ import annotations

from trafka.broker import registry
from trafka.broker.handlers.describe_acls import NO_AUTHORIZER
from trafka.wire.errors import ErrorCode


@registry.handles(31, min_version=1, max_version=3)
async def handle(ctx, request):
    results = [{"error_code": ErrorCode.SECURITY_DISABLED, "error_message": NO_AUTHORIZER, "matching_acls": []}
               for _ in request.filters]
    return {"throttle_time_ms": 0, "filter_results": results}
