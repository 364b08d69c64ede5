"""Delegation tokens (KIP-48): trafka has no token authentication, so every token API answers
as a Kafka broker without `delegation.token.secret.key` does.

Kafka first refuses token requests on connections that cannot carry one (KafkaApis
`allowTokenRequests`): PLAINTEXT, one-way SSL (an anonymous principal) and token-authenticated
sessions get DELEGATION_TOKEN_REQUEST_NOT_ALLOWED; the rest (SASL, mutual TLS) get
DELEGATION_TOKEN_AUTH_DISABLED, since no token can be made, renewed, expired or described.
"""

from __future__ import annotations

from trafka.broker.security.layer import ANONYMOUS
from trafka.wire.errors import ErrorCode


def token_request_error(session) -> ErrorCode:
    """The error every delegation-token request gets on this connection."""
    listener = session.listener
    if listener.protocol == "PLAINTEXT" or (listener.protocol == "SSL" and session.principal == ANONYMOUS):
        return ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    return ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED


def split_principal(principal: str | None) -> tuple[str, str]:
    """"User:alice" -> ("User", "alice")."""
    kind, _, name = (principal or ANONYMOUS).partition(":")
    return kind, name
