"""CreateDelegationToken (key 38), versions 1-3.

Behavior:
- No token authentication (trafka/broker/security/tokens.py): on PLAINTEXT and one-way SSL
  connections DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, elsewhere a renewer that is not a User is
  INVALID_PRINCIPAL_TYPE, a token for another owner without CREATE_TOKENS on that USER
  DELEGATION_TOKEN_AUTHORIZATION_FAILED, and any other request DELEGATION_TOKEN_AUTH_DISABLED, as a Kafka
  broker without `delegation.token.secret.key` answers. The answer names the owner (the
  request's owner, else the caller) and, from v3, the requester.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import USER, Op, authorize
from trafka.broker.security.tokens import split_principal, token_request_error
from trafka.wire.errors import ErrorCode


@routes.handles(38, min_version=1, max_version=3)
async def handle(ctx, request):
    requester_type, requester_name = split_principal(ctx.principal)
    owner_type, owner_name = requester_type, requester_name
    if request.owner_principal_name:
        owner_type, owner_name = request.owner_principal_type or "User", request.owner_principal_name
    error = token_request_error(ctx.session)
    if error == ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED and any(r.principal_type != "User" for r in request.renewers):
        error = ErrorCode.INVALID_PRINCIPAL_TYPE
    elif (error == ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED and (owner_type, owner_name) != (requester_type, requester_name)
          and not authorize(ctx, Op.CREATE_TOKENS, USER, f"{owner_type}:{owner_name}")):
        error = ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED  # a token for someone else needs CREATE_TOKENS on them
    return {
        "error_code": error,
        "principal_type": owner_type,
        "principal_name": owner_name,
        "token_requester_principal_type": requester_type,
        "token_requester_principal_name": requester_name,
        "throttle_time_ms": 0,
    }
