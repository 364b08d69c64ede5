"""SaslAuthenticate (key 36), versions 0-2.

Behavior:
- One SASL token in, one out; PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER (trafka.broker.security).
- Refused credentials: SASL_AUTHENTICATION_FAILED with Kafka's message, a log line naming the
  principal and the peer, and the connection is closed after the answer, as in Kafka.
- v1+: session_lifetime_ms is connections.max.reauth.ms (capped by an OAUTHBEARER token's
  expiry); 0 means the session never has to re-authenticate.
"""

from __future__ import annotations

from trafka.broker.requests import routes


@routes.handles(36, min_version=0, max_version=2)
async def handle(ctx, request):
    error, message, reply, lifetime = ctx.session.authenticate(bytes(request.auth_bytes))
    return {"error_code": error, "error_message": message, "auth_bytes": reply, "session_lifetime_ms": lifetime}
