"""SaslHandshake (key 17), versions 0-1.

Behavior:
- Answers with the listener's sasl.enabled.mechanisms. On a listener without SASL, or in the
  middle of an exchange, ILLEGAL_SASL_STATE; an unknown mechanism, UNSUPPORTED_SASL_MECHANISM.
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
