"""DescribeDelegationToken (key 41), versions 1-3.

Behavior:
- No token authentication (trafka/broker/security/tokens.py): DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
  on PLAINTEXT and one-way SSL connections, DELEGATION_TOKEN_AUTH_DISABLED elsewhere, and no
  tokens, as Kafka answers without `delegation.token.secret.key`.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.tokens import token_request_error


@routes.handles(41, min_version=1, max_version=3)
async def handle(ctx, request):
    return {"error_code": token_request_error(ctx.session), "tokens": [], "throttle_time_ms": 0}
