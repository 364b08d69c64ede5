"""SaslHandshake (key 17), versions 0-1.

Behavior:
- Answers with the listener's sasl.enabled.mechanisms. On a listener without SASL,
  ILLEGAL_SASL_STATE; an unknown mechanism, UNSUPPORTED_SASL_MECHANISM. In the middle of an
  exchange it never gets here: as any request but SaslAuthenticate then, it is answered
  ILLEGAL_SASL_STATE and the connection closed (network/connection.py, as Kafka's
  SaslServerAuthenticator).
- v0: the SASL tokens then follow as bare size-prefixed frames (the connection reads them);
  v1: in SaslAuthenticate requests. A v1 handshake on an authenticated connection starts a
  re-authentication (KIP-368).
"""

from __future__ import annotations

from trafka.broker.requests import routes


@routes.handles(17, min_version=0, max_version=1)
async def handle(ctx, request):
    error, mechanisms = ctx.session.handshake(request.mechanism, ctx.version)
    return {"error_code": error, "mechanisms": mechanisms}
