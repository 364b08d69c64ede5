"""What one client may cost the broker in connections, as Kafka's SocketServer bounds it.

Kafka's names and defaults (its ConnectionQuotas): `max.connections` (all listeners together; a
new connection waits, unread, until one closes, as Kafka's acceptor stops accepting),
`max.connections.per.ip` with `max.connections.per.ip.overrides` (`host:count,...`; past it the new
connection is closed at once), `max.connection.creation.rate` (connections per second, broker-wide;
past it new connections are delayed, as Kafka throttles its acceptor), `connections.max.idle.ms`
(a connection with no request for that long is closed, authenticated or not). These two are
real time (trio's clock), not the broker clock: a test that moves broker time by hours must not
see every client disconnected as idle.
trafka adds one of its own, `sasl.handshake.timeout.ms`: a connection on a SASL listener that has
not authenticated within it is closed, however busy it keeps the broker with ApiVersions.

Every limit logs one line naming the limit and the peer's address, at most once per address and
limit per `LOG_INTERVAL_SECONDS`, so a client hammering a limit cannot flood the log.
"""

from __future__ import annotations

import logging
import time
from collections import deque

import trio

from trafka.settings import connection_overrides

log = logging.getLogger("trafka.broker")

LOG_INTERVAL_SECONDS = 60.0


class LimitLog:
    """One log line per (limit, address) per interval; the suppressed ones are counted in the next."""

    def __init__(self, interval: float = LOG_INTERVAL_SECONDS):
        self.interval = interval
        self._last: dict[tuple[str, str], tuple[float, int]] = {}

    def warn(self, limit: str, address: str, message: str) -> None:
        now = time.monotonic()
        key = (limit, address)
        last, suppressed = self._last.get(key, (None, 0))
        if last is not None and now - last < self.interval:
            self._last[key] = (last, suppressed + 1)
            return
        more = f" ({suppressed} more since the last line)" if suppressed else ""
        log.warning("%s: %s%s", limit, message, more)
        self._last[key] = (now, 0)
        if len(self._last) > 10_000:  # addresses that stopped coming are forgotten
            cutoff = now - self.interval
            self._last = {k: v for k, v in self._last.items() if v[0] >= cutoff}


class ConnectionQuotas:
    """The broker-wide connection counts and each open connection's last activity."""

    def __init__(self, config):
        self.reconfigure(config)
        self.idle_ms = config["connections.max.idle.ms"]
        self.handshake_ms = config["sasl.handshake.timeout.ms"]
        self.limit_log = LimitLog()
        self.per_ip: dict[str, int] = {}
        self.total = 0
        self._freed = trio.Event()
        self._created: deque[float] = deque()
        self._open: set[OpenConnection] = set()

    def reconfigure(self, config) -> None:
        """The limits in force (at start, and when a dynamic broker config changes them; open
        connections stay, new ones meet the new limits, as in Kafka)."""
        self.max_connections = config["max.connections"]
        self.max_per_ip = config["max.connections.per.ip"]
        self.overrides = connection_overrides(config["max.connections.per.ip.overrides"])
        self.creation_rate = config["max.connection.creation.rate"]

    def per_ip_limit(self, address: str) -> int:
        return self.overrides.get(address, self.max_per_ip)

    async def admit(self, address: str) -> "OpenConnection | None":
        """Count a new connection in, or None when it must be closed (too many from its address).
        Waits while the broker is at max.connections or over max.connection.creation.rate."""
        limit = self.per_ip_limit(address)
        if self.per_ip.get(address, 0) >= limit:
            self.limit_log.warn("max.connections.per.ip", address,
                                f"closing a new connection from {address}: it has {limit} open already")
            return None
        await self._throttle_creation(address)
        while self.total >= self.max_connections:
            self.limit_log.warn("max.connections", address,
                                f"the broker has {self.total} connections open; a new one from {address} "
                                f"waits until one closes")
            await self._freed.wait()
        if self.per_ip.get(address, 0) >= limit:  # others from the same address got in while it waited
            self.limit_log.warn("max.connections.per.ip", address,
                                f"closing a new connection from {address}: it has {limit} open already")
            return None
        self.total += 1
        self.per_ip[address] = self.per_ip.get(address, 0) + 1
        connection = OpenConnection(self, address, trio.current_time())
        self._open.add(connection)
        return connection

    async def _throttle_creation(self, address: str) -> None:
        rate = self.creation_rate
        if rate >= 2**31 - 1:
            return
        window = self._created
        while True:
            now = trio.current_time()
            while window and now - window[0] >= 1.0:
                window.popleft()
            if len(window) < rate:
                window.append(now)
                return
            self.limit_log.warn("max.connection.creation.rate", address,
                                f"more than {rate} new connections per second; delaying the one from {address}")
            await trio.sleep_until(window[0] + 1.0)

    def release(self, connection: "OpenConnection") -> None:
        if connection not in self._open:
            return
        self._open.discard(connection)
        self.total -= 1
        left = self.per_ip[connection.address] - 1
        if left:
            self.per_ip[connection.address] = left
        else:
            del self.per_ip[connection.address]
        freed, self._freed = self._freed, trio.Event()
        freed.set()

    def close_expired(self) -> None:
        """Close every connection idle past connections.max.idle.ms, and every unauthenticated one
        on a SASL listener past sasl.handshake.timeout.ms (the broker's periodic check)."""
        now = trio.current_time()
        for connection in list(self._open):
            reason = connection.expired(now)
            if reason:
                self.limit_log.warn(reason[0], connection.address, f"closing the connection from "
                                    f"{connection.peer or connection.address}: {reason[1]}")
                connection.cancel_scope.cancel()

    async def run(self) -> None:
        """The broker's task closing expired connections, checking at a tenth of the shortest
        limit (at most every 30 s, at least every 10 ms)."""
        limits = [ms for ms in (self.idle_ms, self.handshake_ms) if ms and ms > 0]
        if not limits:
            return
        interval = max(min([30_000, *(ms // 10 for ms in limits)]), 10) / 1000
        while True:
            await trio.sleep(interval)
            self.close_expired()

    def snapshot(self) -> dict:
        return {"open": self.total, "per_ip": dict(self.per_ip)}


class OpenConnection:
    """One admitted connection: its address, its last request (trio time, seconds), its session."""

    __slots__ = ("quotas", "address", "peer", "last_active", "opened", "session", "cancel_scope", "in_request", "__weakref__")

    def __init__(self, quotas: ConnectionQuotas, address: str, now: float):
        self.quotas = quotas
        self.address = address
        self.peer: str | None = None
        self.opened = now
        self.last_active = now
        self.session = None
        self.cancel_scope = trio.CancelScope()
        self.in_request = False  # a request being answered (a long poll, a rebalance) is not idleness

    def active(self, in_request: bool) -> None:
        self.last_active = trio.current_time()
        self.in_request = in_request

    def expired(self, now: float) -> tuple[str, str] | None:
        quotas = self.quotas
        session = self.session
        if (quotas.handshake_ms > 0 and session is not None and session.listener.sasl and session.principal is None
                and (now - self.opened) * 1000 > quotas.handshake_ms):
            return ("sasl.handshake.timeout.ms", f"SASL authentication did not complete within {quotas.handshake_ms} ms")
        idle_ms = (now - self.last_active) * 1000
        if quotas.idle_ms > 0 and idle_ms > quotas.idle_ms and not self.in_request:
            return ("connections.max.idle.ms", f"no request for {idle_ms:.0f} ms")
        return None


__all__ = ["ConnectionQuotas", "LimitLog", "OpenConnection"]
