"""The broker's security layer: TLS on a listener's streams, one SASL state machine per connection.

`SecurityLayer` is built once from the settings (TLS contexts, PLAIN users, the SCRAM store);
`open_connection` turns an accepted stream into (stream, Session). The connection asks the
session `refusal(api_key)` (closed without an answer) and `unexpected_request(api_key)`
(answered ILLEGAL_SASL_STATE, then closed) before each request; the SASL handlers drive it.
"""

from __future__ import annotations

import base64
import hmac

import logging
import ssl

import trio

from trafka.broker.config import ConfigError
from trafka.broker.security import tls
from trafka.broker.security.jaas import parse_jaas, plain_users
from trafka.broker.security.listeners import Listener
from trafka.broker.security.mechanism import AuthenticationFailed, PlainServer
from trafka.broker.security.oauthbearer import OAuthBearerServer
from trafka.broker.security.scram import MECHANISM_IDS, ScramCredentialStore, ScramServer
from trafka.storage.clock import SystemClock
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.broker")

SUPPORTED_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
ANONYMOUS = "User:ANONYMOUS"
TLS_HANDSHAKE_TIMEOUT_SECONDS = 30
SASL_AUTHENTICATE = 36
_SASL_KEYS = frozenset({17, SASL_AUTHENTICATE})  # SaslHandshake, SaslAuthenticate
_BEFORE_AUTH = frozenset({17, 18, 36})  # and ApiVersions


class SecurityLayer:
    def __init__(self, config, data_dir, clock=None, metadata=None):
        """`metadata`: the broker's ClusterMetadata, where the SCRAM credentials live."""
        self.config = config
        self.data_dir = data_dir
        # Session expiry and token expiry are read on the broker clock, so a test moves time
        # (advance_clock) instead of sleeping past a session or a token's exp.
        self.clock = clock or SystemClock()
        self.scram = ScramCredentialStore(metadata)
        self._contexts: dict[str, ssl.SSLContext] = {}

    def prepare(self, listeners: list[Listener]) -> None:
        """Check every listener's settings before anything listens: bad TLS or JAAS stops the start."""
        for listener in listeners:
            if listener.tls:
                self._contexts[listener.name] = tls.server_context(self.config, listener.name, self.data_dir)
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

    def password_users(self, listeners: list[Listener]) -> dict[str, str]:
        """PLAIN users (user_<name>="<password>" in sasl.jaas.config) of every listener."""
        users: dict[str, str] = {}
        for listener in listeners:
            text = tls.setting(self.config, listener.name, "sasl.jaas.config", "PLAIN")
            if text:
                users.update(plain_users(text))
        return users

    def check_password(self, listeners: list[Listener], user: str, password: str) -> bool:
        """Whether `user` / `password` are a SASL user's (PLAIN, or a SCRAM credential): the schema
        registry's HTTP Basic check (schema.registry.auth=basic)."""
        plain = self.password_users(listeners)
        if user in plain:
            return hmac.compare_digest(plain[user].encode(), password.encode())
        credentials = self.scram.users.get(user, {})
        return any(credential.matches(mechanism, password) for mechanism, credential in credentials.items())

    def basic_user(self, listeners: list[Listener], authorization: str) -> str | None:
        """The user an HTTP `Authorization: Basic ...` header names when its password is that
        SASL user's (`check_password`), else None: the HTTP side's one Basic check (the schema
        registry's schema.registry.auth, the REST proxy's rest.proxy.auth)."""
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            user, sep, password = base64.b64decode(token.strip(), validate=True).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return None
        return user if sep and self.check_password(listeners, user, password) else None

    def mechanism_server(self, listener: Listener, mechanism: str):
        if mechanism == "PLAIN":
            text = tls.setting(self.config, listener.name, "sasl.jaas.config", mechanism)
            return PlainServer(plain_users(text) if text else {})
        if mechanism in MECHANISM_IDS:
            return ScramServer(mechanism, self.scram)
        options: dict[str, str] = {}
        for _module, entry in self._jaas(listener, mechanism):
            options.update(entry)
        return OAuthBearerServer(options, self.clock)

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
                await _send_alert(stream)
                await trio.aclose_forcefully(stream)
                return None
            if not listener.sasl:
                principal = tls.certificate_principal(stream.getpeercert(binary_form=True))
        return stream, Session(self, listener, peer, principal)


async def _send_alert(stream: trio.SSLStream) -> None:
    """Send the TLS alert OpenSSL wrote when the handshake failed (e.g. certificate_required
    for an mTLS client without a certificate). trio marks the stream broken and leaves the alert
    in its outgoing buffer; without it the client sees a bare EOF, which Java's client takes for
    a lost connection and retries until its timeout instead of failing with
    SslAuthenticationException."""
    outgoing = getattr(stream, "_outgoing", None)  # trio.SSLStream's MemoryBIO (private)
    alert = outgoing.read() if outgoing is not None else b""
    if alert:
        with trio.move_on_after(1):
            try:
                await stream.transport_stream.send_all(alert)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass


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
        self.expires_at: int | None = None  # broker-clock ms; re-authenticate before it
        self._expiry_reason = ""
        self._server = None
        self._mechanism: str | None = None
        self._failure_logged = False

    def refusal(self, api_key: int) -> str | None:
        """Why this request may not be served now (the connection is closed without an answer,
        as Kafka closes it), or None. A request while SaslAuthenticate is awaited is not refused
        here but answered: `unexpected_request`."""
        if self.state == "authenticate":
            return None
        if self.principal is None and api_key not in _BEFORE_AUTH:
            return f"request (API key {api_key}) before SASL authentication completed on listener {self.listener.name}"
        if (self.expires_at is not None and self.layer.clock.time_ms() > self.expires_at and api_key not in _SASL_KEYS
                and self.state == "authenticated"):
            return f"session of {self.principal} expired ({self._expiry_reason}) without re-authentication"
        return None

    def unexpected_request(self, api_key: int) -> str | None:
        """Why a request is answered ILLEGAL_SASL_STATE and the login failed (the connection then
        closes), or None. Once a SaslHandshake v1 started an exchange, Kafka's
        SaslServerAuthenticator takes nothing but SaslAuthenticate: anything else gets its own
        error response and ends the connection. So does a re-authentication (KIP-368), or a
        client whose session expired could keep working by starting one and never finishing."""
        if self.state != "authenticate" or self.raw_tokens or api_key == SASL_AUTHENTICATE:
            return None
        refused = getattr(self._server, "error", None)
        if refused:  # a client that does not answer the error challenge (aiokafka) goes on regardless
            return (f"request (API key {api_key}) after the {self._mechanism} credentials of {self._claimed()} "
                    f"were refused ({refused}) on listener {self.listener.name}")
        if self.principal is not None:
            return (f"request (API key {api_key}) during the SASL re-authentication of {self.principal} on "
                    f"listener {self.listener.name}")
        return f"request (API key {api_key}) during the SASL authentication on listener {self.listener.name}"

    def fail(self) -> None:
        """The login failed: the connection answers what it must, then closes."""
        self.state = "failed"

    def _claimed(self) -> str:
        user = getattr(self._server, "username", None)
        return f"User:{user}" if user else "an unnamed user"

    def handshake(self, mechanism: str, version: int) -> tuple[int, list[str]]:
        offered = self.layer.mechanisms(self.listener) if self.listener.sasl else []
        if not self.listener.sasl or (self.principal and version == 0):
            return ErrorCode.ILLEGAL_SASL_STATE, offered
        if mechanism not in offered:
            return ErrorCode.UNSUPPORTED_SASL_MECHANISM, offered
        if self.principal is not None and mechanism != self._mechanism:
            # As Kafka: the handshake succeeds, the re-authentication then fails with this message
            self._server = _Refuse(f"SASL mechanism '{mechanism}' requested by client is not supported for "
                                   f"re-authentication of mechanism '{self._mechanism}'", self.principal)
        else:
            self._server = self.layer.mechanism_server(self.listener, mechanism)
        self._mechanism = mechanism
        self._failure_logged = False
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
            refused = getattr(self._server, "error", None)
            if refused and not self._failure_logged:  # OAUTHBEARER's error challenge: logged now, the
                self._log_failure(refused)  # client's %x01 then ends the exchange with the error code
            return ErrorCode.NONE, None, reply, 0
        principal = "User:" + self._server.username
        if self.principal is not None and principal != self.principal:
            return self._failed(f"Cannot change principals during re-authentication from {self.principal} to {principal}")
        self.principal = principal
        self.state = "authenticated"
        self.raw_tokens = False
        lifetime = tls.setting(self.layer.config, self.listener.name, "connections.max.reauth.ms", self._mechanism)
        self._expiry_reason = "connections.max.reauth.ms"
        token_lifetime = getattr(self._server, "lifetime_ms", None)
        if token_lifetime is not None and (not lifetime or token_lifetime < lifetime):
            # As Kafka: the token's exp ends the session even when connections.max.reauth.ms is 0.
            lifetime, self._expiry_reason = token_lifetime, f"the {self._mechanism} token's exp passed"
        self.expires_at = self.layer.clock.time_ms() + lifetime if lifetime else None
        log.info("authenticated %s from %s with %s on listener %s", principal, self.peer, self._mechanism,
                 self.listener.name)
        return ErrorCode.NONE, None, reply, lifetime

    def _log_failure(self, message: str) -> None:
        self._failure_logged = True
        log.warning("failed authentication of %s from %s with %s on listener %s: %s",
                    self._claimed(), self.peer, self._mechanism, self.listener.name, message)

    def _failed(self, message: str) -> tuple[int, str, bytes, int]:
        if not self._failure_logged:
            self._log_failure(message)
        self.state = "failed"
        return ErrorCode.SASL_AUTHENTICATION_FAILED, message, b"", 0


class _Refuse:
    """A mechanism server that refuses whatever comes (a re-authentication with another mechanism)."""

    complete = False

    def __init__(self, message: str, principal: str):
        self.message = message
        self.username = principal.removeprefix("User:")

    def evaluate(self, token: bytes) -> bytes:
        raise AuthenticationFailed(self.message)
