"""RenewDelegationToken (key 39), versions 1-2.

Behavior:
- No token authentication (trafka/broker/security/tokens.py): DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
  on PLAINTEXT and one-way SSL connections, DELEGATION_TOKEN_AUTH_DISABLED elsewhere, with
  expiry timestamp -1, as Kafka answers without `delegation.token.secret.key`.
- ExpireDelegationToken (key 40) is answered by this same function (expire_delegation_token.py).
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.tokens import token_request_error


@routes.handles(39, min_version=1, max_version=2)
async def handle(ctx, request):
    return {"error_code": token_request_error(ctx.session), "expiry_timestamp_ms": -1, "throttle_time_ms": 0}
