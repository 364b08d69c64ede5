"""ExpireDelegationToken (key 40), versions 1-2.

Behavior: answered exactly as RenewDelegationToken (renew_delegation_token.py): no token
authentication, so DELEGATION_TOKEN_REQUEST_NOT_ALLOWED on PLAINTEXT and one-way SSL
connections, DELEGATION_TOKEN_AUTH_DISABLED elsewhere, with expiry timestamp -1.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.handlers.renew_delegation_token import handle as _answer_without_tokens

handle = routes.handles(40, min_version=1, max_version=2)(_answer_without_tokens)
