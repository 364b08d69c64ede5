"""DescribeAcls (key 29), versions 1-3 (v0 left Kafka in 4.0).

Behavior:
- trafka has no authorizer yet (docs/security.md): answered SECURITY_DISABLED, as Kafka answers
  when `authorizer.class.name` is not set, so admin clients get Kafka's "no authorizer" error.
"""

from __future__ import annotations

from trafka.broker import registry
from trafka.wire.errors import ErrorCode

NO_AUTHORIZER = "No Authorizer is configured on the broker"


@registry.handles(29, min_version=1, max_version=3)
async def handle(ctx, request):
    return {"throttle_time_ms": 0, "error_code": ErrorCode.SECURITY_DISABLED, "error_message": NO_AUTHORIZER,
            "resources": []}
