"""What every SASL mechanism server shares: `evaluate(token) -> reply`, `complete`, `username`."""

from __future__ import annotations

import hmac


class AuthenticationFailed(Exception):
    """The client's credentials were refused; the message goes back to the client."""


class PlainServer:
    """SASL PLAIN (RFC 4616): [authzid] NUL username NUL password, checked against JAAS users."""

    def __init__(self, users: dict[str, str]):
        self.users = users
        self.username: str | None = None
        self.complete = False

    def evaluate(self, token: bytes) -> bytes:
        parts = token.split(b"\0")
        if len(parts) != 3:
            raise AuthenticationFailed("Invalid SASL/PLAIN response: expected 3 tokens")
        try:
            authzid, username, password = (p.decode("utf-8") for p in parts)
        except UnicodeDecodeError:
            raise AuthenticationFailed("Invalid SASL/PLAIN response: not UTF-8") from None
        self.username = username
        if not username:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if authzid and authzid != username:
            raise AuthenticationFailed("Authentication failed: Client requested an authorization id that is "
                                       "different from username")
        expected = self.users.get(username)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        self.complete = True
        return b""
