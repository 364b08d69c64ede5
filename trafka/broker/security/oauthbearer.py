"""SASL OAUTHBEARER (RFC 7628) with Kafka's unsecured-JWT validator, for local use.

The token is a JWT with `"alg":"none"`; it must carry the principal claim (`sub` unless
`unsecuredValidatorPrincipalClaimName` says otherwise), an `exp` in the future and, when
`unsecuredValidatorRequiredScope` is set, those scopes. As in Kafka, a refused token gets an
error challenge (`{"status":"invalid_token"}`); the client's `%x01` reply then ends the exchange
with SASL_AUTHENTICATION_FAILED.
"""

from __future__ import annotations

import base64
import json
import math

from trafka.broker.security.mechanism import AuthenticationFailed
from trafka.storage.clock import SystemClock


def _b64url_json(part: str) -> dict:
    try:
        value = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except ValueError:
        raise ValueError("not base64url-encoded JSON") from None
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


class OAuthBearerServer:
    def __init__(self, options: dict[str, str], clock=None):
        self.clock = clock or SystemClock()  # the broker clock: exp and iat are read against it
        self.principal_claim = options.get("unsecuredValidatorPrincipalClaimName", "sub")
        self.scope_claim = options.get("unsecuredValidatorScopeClaimName", "scope")
        self.required_scope = options.get("unsecuredValidatorRequiredScope", "").split()
        self.skew_ms = int(options.get("unsecuredValidatorAllowableClockSkewMs", "0") or 0)
        self.username: str | None = None
        self.lifetime_ms: int | None = None  # the token's own expiry, caps the session
        self.complete = False
        self.error: str | None = None  # why the token was refused (sent as an error challenge)

    def evaluate(self, token: bytes) -> bytes:
        if self.error is not None:
            if token == b"\x01":
                raise AuthenticationFailed(f"Authentication failed: {self.error}")
            raise AuthenticationFailed("expected %x01 after the error challenge")
        try:
            message = token.decode("utf-8")
        except UnicodeDecodeError:
            raise AuthenticationFailed("OAUTHBEARER message is not UTF-8") from None
        gs2, sep, rest = message.partition("\x01")
        if not sep or not gs2.startswith(("n,", "y,")):
            raise AuthenticationFailed("malformed OAUTHBEARER client message")
        fields = dict(kv.partition("=")[::2] for kv in rest.split("\x01") if kv)
        auth = fields.get("auth", "")
        if not auth.startswith("Bearer "):
            raise AuthenticationFailed("OAUTHBEARER message lacks auth=Bearer <token>")
        try:
            self._validate(auth[len("Bearer "):].strip())
        except ValueError as exc:
            self.error = str(exc)
            return json.dumps({"status": "invalid_token"}).encode()
        self.complete = True
        return b""

    def _validate(self, jwt: str) -> None:
        parts = jwt.split(".")
        if len(parts) != 3:
            raise ValueError("the token is not a JWT (header.payload.signature)")
        header, claims = _b64url_json(parts[0]), _b64url_json(parts[1])
        principal = claims.get(self.principal_claim)
        if isinstance(principal, str) and principal:
            self.username = principal  # named in the log line if the token is refused below
        if header.get("alg") != "none":
            raise ValueError(f"the unsecured validator accepts only alg=none tokens, not alg={header.get('alg')!r}")
        now_ms = self.clock.time_ms()
        exp = claims.get("exp")
        if not isinstance(exp, (int, float)) or isinstance(exp, bool) or not math.isfinite(exp):
            raise ValueError("the token has no numeric exp claim")
        if exp * 1000 + self.skew_ms <= now_ms:
            raise ValueError("the token has expired")
        iat = claims.get("iat")
        if isinstance(iat, (int, float)) and math.isfinite(iat) and iat * 1000 - self.skew_ms > now_ms:
            raise ValueError("the token was issued in the future")
        if not isinstance(principal, str) or not principal:
            raise ValueError(f"the token has no {self.principal_claim} claim")
        scope = claims.get(self.scope_claim, [])
        scopes = scope.split() if isinstance(scope, str) else scope if isinstance(scope, list) else []
        missing = [s for s in self.required_scope if s not in scopes]
        if missing:
            raise ValueError(f"the token lacks the required scope {' '.join(missing)}")
        self.lifetime_ms = max(1, int(exp * 1000 - now_ms))
