"""Unsecured JWTs (`alg: none`, as Kafka's OAuthBearerUnsecuredLoginCallbackHandler makes them)
and the token providers kafka-python and aiokafka take for OAUTHBEARER.

Tokens are minted against a clock the test gives (usually the broker's, `broker.clock()`), so a
test can move broker time past a token's exp instead of sleeping."""

from __future__ import annotations

import base64
import json
import time
from typing import Callable


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsecured_jwt(claims: dict, header: dict | None = None, signature: str = "") -> str:
    """header.payload.signature; an unsecured JWT has an empty signature."""
    header = {"alg": "none"} if header is None else header
    return ".".join([_b64url(json.dumps(header).encode()), _b64url(json.dumps(claims).encode()), signature])


def claims_for(principal: str, now_ms: int, lifetime_s: int = 3600, **extra) -> dict:
    now_s = now_ms // 1000
    return {"sub": principal, "iat": now_s, "exp": now_s + lifetime_s, **extra}


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def broker_clock(broker) -> Callable[[], int]:
    return lambda: int(broker.clock()["time_ms"])


class TokenSource:
    """Mints a fresh token on each call (and counts the calls): `principal`'s unsecured JWT
    living `lifetime_s` from `now_ms()`, or exactly `fixed` when given (a bad token)."""

    def __init__(self, principal: str, now_ms: Callable[[], int] = wall_clock_ms, lifetime_s: int = 3600,
                 fixed: str | None = None):
        self.principal = principal
        self.now_ms = now_ms
        self.lifetime_s = lifetime_s
        self.fixed = fixed
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.fixed is not None:
            return self.fixed
        return unsecured_jwt(claims_for(self.principal, self.now_ms(), self.lifetime_s))


def kafka_python_provider(source: TokenSource):
    from kafka.net.sasl.oauth import AbstractTokenProvider

    class Provider(AbstractTokenProvider):
        def token(self):
            return source()

    return Provider()


def aiokafka_provider(source: TokenSource):
    import asyncio

    from aiokafka.abc import AbstractTokenProvider

    class Provider(AbstractTokenProvider):
        async def token(self):
            # the broker clock is read over HTTP: off the event loop
            return await asyncio.get_running_loop().run_in_executor(None, source)

    return Provider()


def oauthbearer_message(token: str) -> bytes:
    """The client's first OAUTHBEARER message (RFC 7628): gs2 header, auth=Bearer, kvsep."""
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()
