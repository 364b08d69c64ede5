"""The broker's security layer: TLS on a listener's streams, one SASL state machine per connection.

`SecurityLayer` is built once from the settings (TLS contexts, PLAIN users, the SCRAM store);
`open_connection` turns an accepted stream into (stream, Session). The connection asks the
session `refusal(api_key)` before each request; the SASL handlers drive it.
"""

from __future__ import annotations

import logging
import ssl
import time

import trio

from trafka.broker.config import ConfigError
from trafka.broker.security import tls
from trafka.broker.security.jaas import parse_jaas, plain_users
from trafka.broker.security.listeners import Listener
from trafka.broker.security.mechanism import AuthenticationFailed, PlainServer
from trafka.broker.security.oauthbearer import OAuthBearerServer
from trafka.broker.security.scram import MECHANISM_IDS, ScramCredentialStore, ScramServer
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.broker")

SUPPORTED_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
ANONYMOUS = "User:ANONYMOUS"
TLS_HANDSHAKE_TIMEOUT_SECONDS = 30
_SASL_KEYS = frozenset({17, 36})  # SaslHandshake, SaslAuthenticate
_BEFORE_AUTH = frozenset({17, 18, 36})  # and ApiVersions


class SecurityLayer:
    def __init__(self, config, data_dir):
        self.config = config
        self.scram = ScramCredentialStore(data_dir)
        self._contexts: dict[str, ssl.SSLContext] = {}

    def prepare(self, listeners: list[Listener]) -> None:
        """Check every listener's settings before anything listens: bad TLS or JAAS stops the start."""
        for listener in listeners:
            if listener.tls:
                self._contexts[listener.name] = tls.server_context(self.config, listener.name)
            if listener.sasl:
                for mechanism in self.mechanisms(listener):
                    if mechanism not in SUPPORTED_MECHANISMS:
                        raise ConfigError(f"sasl.enabled.mechanisms: {mechanism} is not supported "
                                          f"(trafka has {', '.join(SUPPORTED_MECHANISMS)})")
                    self._jaas(listener, mechanism)

    def mechanisms(self, listener: Listener) -> list[str]:
        text = tls.setting(self.config, listener.name, "sasl.enabled.mechanisms")
        return [m.strip().upper() for m in text.split(",") if m.strip()]

    def _jaas(self, listener: Listener, mechanism: str) -> list:
        text = tls.setting(self.config, listener.name, "sasl.jaas.config", mechanism)
        return parse_jaas(text) if text else []

    def mechanism_server(self, listener: Listener, mechanism: str):
        if mechanism == "PLAIN":
            text = tls.setting(self.config, listener.name, "sasl.jaas.config", mechanism)
            return PlainServer(plain_users(text) if text else {})
        if mechanism in MECHANISM_IDS:
            return ScramServer(mechanism, self.scram)
        options: dict[str, str] = {}
        for _module, entry in self._jaas(listener, mechanism):
            options.update(entry)
        return OAuthBearerServer(options)

    async def open_connection(self, stream, listener: Listener, peer: str):
        """(stream, Session) for an accepted connection, or None when its TLS handshake failed."""
        principal = ANONYMOUS
        if listener.tls:
            stream = trio.SSLStream(stream, self._contexts[listener.name], server_side=True)
            try:
                with trio.fail_after(TLS_HANDSHAKE_TIMEOUT_SECONDS):
                    await stream.do_handshake()
            except (trio.BrokenResourceError, trio.TooSlowError, trio.ClosedResourceError) as exc:
                reason = exc.__cause__ or exc
                hint = " (is the client speaking plaintext to a TLS listener?)" if _plaintext_hint(reason) else ""
                log.warning("closing connection from %s: TLS handshake failed on listener %s: %s%s",
                            peer, listener.name, _ssl_reason(reason), hint)
                await trio.aclose_forcefully(stream)
                return None
            if not listener.sasl:
                principal = tls.certificate_principal(stream.getpeercert(binary_form=True))
        return stream, Session(self, listener, peer, principal)


def _ssl_reason(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLError):
        return exc.reason or str(exc)
    if isinstance(exc, trio.TooSlowError):
        return f"no handshake within {TLS_HANDSHAKE_TIMEOUT_SECONDS} s"
    return str(exc) or type(exc).__name__


def _plaintext_hint(exc: BaseException) -> bool:
    return isinstance(exc, ssl.SSLError) and (exc.reason or "") in ("WRONG_VERSION_NUMBER", "HTTP_REQUEST",
                                                                     "UNKNOWN_PROTOCOL", "RECORD_LAYER_FAILURE")


class Session:
    """One connection's identity. On SASL listeners: handshake -> authenticate -> authenticated,
    and back through handshake/authenticate for re-authentication."""

    def __init__(self, layer: SecurityLayer, listener: Listener, peer: str, principal: str):
        self.layer = layer
        self.listener = listener
        self.peer = peer
        self.principal: str | None = None if listener.sasl else principal
        self.state = "handshake" if listener.sasl else "authenticated"
        self.raw_tokens = False  # after a v0 SaslHandshake: bare SASL frames follow
        self.expires_at: float | None = None  # monotonic seconds; re-authenticate before it
        self._server = None
        self._mechanism: str | None = None

    def refusal(self, api_key: int) -> str | None:
        """Why this request may not be served now (the connection is closed), or None."""
        if self.principal is None and api_key not in _BEFORE_AUTH:
            return f"request (API key {api_key}) before SASL authentication completed on listener {self.listener.name}"
        if (self.expires_at is not None and time.monotonic() > self.expires_at and api_key not in _SASL_KEYS
                and self.state == "authenticated"):
            return f"session of {self.principal} expired (connections.max.reauth.ms) without re-authentication"
        return None

    def handshake(self, mechanism: str, version: int) -> tuple[int, list[str]]:
        offered = self.layer.mechanisms(self.listener) if self.listener.sasl else []
        if not self.listener.sasl or self.state == "authenticate" or (self.principal and version == 0):
            return ErrorCode.ILLEGAL_SASL_STATE, offered
        if mechanism not in offered:
            return ErrorCode.UNSUPPORTED_SASL_MECHANISM, offered
        self._mechanism = mechanism
        self._server = self.layer.mechanism_server(self.listener, mechanism)
        self.state = "authenticate"
        self.raw_tokens = version == 0
        return ErrorCode.NONE, offered

    def authenticate(self, token: bytes) -> tuple[int, str | None, bytes, int]:
        """(error code, error message, reply token, session lifetime ms) for one SASL token."""
        if self.state != "authenticate":
            return ErrorCode.ILLEGAL_SASL_STATE, "SaslAuthenticate before a successful SaslHandshake", b"", 0
        try:
            reply = self._server.evaluate(token)
        except AuthenticationFailed as exc:
            return self._failed(str(exc))
        if not self._server.complete:
            return ErrorCode.NONE, None, reply, 0
        principal = "User:" + self._server.username
        if self.principal is not None and principal != self.principal:
            return self._failed(f"Cannot change principals during re-authentication from {self.principal} to {principal}")
        self.principal = principal
        self.state = "authenticated"
        self.raw_tokens = False
        lifetime = tls.setting(self.layer.config, self.listener.name, "connections.max.reauth.ms", self._mechanism)
        token_lifetime = getattr(self._server, "lifetime_ms", None)
        if token_lifetime is not None:
            lifetime = min(lifetime, token_lifetime) if lifetime else token_lifetime
        self.expires_at = time.monotonic() + lifetime / 1000 if lifetime else None
        log.info("authenticated %s from %s with %s on listener %s", principal, self.peer, self._mechanism,
                 self.listener.name)
        return ErrorCode.NONE, None, reply, lifetime

    def _failed(self, message: str) -> tuple[int, str, bytes, int]:
        user = getattr(self._server, "username", None)
        log.warning("failed authentication of %s from %s with %s on listener %s: %s",
                    f"User:{user}" if user else "an unnamed user", self.peer, self._mechanism, self.listener.name, message)
        self.state = "failed"
        return ErrorCode.SASL_AUTHENTICATION_FAILED, message, b"", 0
