"""What every client's adapters share: the message shapes (Msg, Got), connection settings
(Auth), the group-consumer interface, errors and time limits."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path


TIMEOUT_S = 20  # the bound on every produce, consume and transaction call
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")

CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"

# Short enough for quick tests, as a developer would set them against a local broker.
SESSION_TIMEOUT_MS = 6000
HEARTBEAT_INTERVAL_MS = 1000


@dataclass(frozen=True)
class Msg:
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...] = ()
    timestamp: int | None = None  # CreateTime in ms; None: the client's clock


@dataclass(frozen=True)
class Got:
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...]
    timestamp: int
    timestamp_type: str = field(default=CREATE_TIME)


def headers_tuple(items) -> tuple[tuple[str, bytes], ...]:
    return tuple((k, bytes(v) if v is not None else None) for k, v in (items or ()))


class TxnFailed(Exception):
    def __init__(self, client: str, error: str):
        super().__init__(f"{client}: {error}")
        self.error = error


class Reading:
    """When a read of values stops: once `until` or `count` values came, after TIMEOUT_S, or,
    with `quiet_s`, that long after the last new value once one came (a read that must come up
    short: what it must not see would have come with what it saw)."""

    def __init__(self, until: bytes | None, count: int | None, quiet_s: float | None = None):
        self.until, self.count, self.quiet_s = until, count, quiet_s
        self.deadline = time.monotonic() + TIMEOUT_S
        self.quiet_until: float | None = None
        self.seen = 0

    def goes_on(self, values: list) -> bool:
        if (self.until is not None and self.until in values) or (self.count is not None and len(values) >= self.count):
            return False
        now = time.monotonic()
        if self.quiet_s is not None and len(values) > self.seen:
            self.seen, self.quiet_until = len(values), now + self.quiet_s
        return now < self.deadline and (self.quiet_until is None or now < self.quiet_until)


class GroupConsumer:
    """One consumer of one topic in a group, subscribed (or, with subscribe=False, assigned by
    hand). Not thread-safe: a test calls it from one thread. Values are decoded strings;
    partitions are numbers of `topic`; a committed offset is the next offset to read."""

    topic: str

    def poll(self, max_records: int, timeout: float) -> list[str]:
        """One poll of the client: at most max_records values, waiting up to timeout seconds."""
        raise NotImplementedError

    def assignment(self) -> set[int]:
        raise NotImplementedError

    def positioned(self) -> bool:
        """Whether every assigned partition has a fetch position (committed or reset)."""
        raise NotImplementedError

    def assign(self, partitions: list[int]) -> None:
        raise NotImplementedError

    def commit(self, offsets: dict[int, int], metadata: str = "") -> None:
        """A synchronous commit of these offsets, as a member of the group if subscribed."""
        raise NotImplementedError

    def committed(self, partition: int) -> int | None:
        raise NotImplementedError

    def close(self) -> None:
        """Closes as the client does: LeaveGroup, and a last commit if auto-commit is on."""
        raise NotImplementedError

    @staticmethod
    def sent_metadata(metadata: str) -> str:
        """The metadata string the client puts in OffsetCommit for `metadata`."""
        return metadata

    @staticmethod
    def is_no_offset_error(exc: BaseException) -> bool:
        """Whether poll raised the client's error for auto.offset.reset=none without an offset."""
        raise NotImplementedError

    def consume(self, count: int, timeout: float = 15) -> list[str]:
        """Polls until `count` values arrived (never more) or the deadline passed."""
        got: list[str] = []
        deadline = time.monotonic() + timeout
        while len(got) < count and time.monotonic() < deadline:
            got += self.poll(count - len(got), 0.5)
        return got

    def wait_positioned(self, timeout: float = 15) -> list[str]:
        """Polls until the consumer has an assignment and a position on each partition of it;
        returns what it read meanwhile."""
        got: list[str] = []
        deadline = time.monotonic() + timeout
        while not (self.assignment() and self.positioned()):
            assert time.monotonic() < deadline, "no assignment with positions"
            got += self.poll(500, 0.2)
        return got


@dataclass
class Auth:
    protocol: str  # PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
    mechanism: str | None = None
    user: str | None = None
    password: str | None = None
    ca: Path | None = None
    cert: Path | None = None  # client certificate and key, for mTLS
    key: Path | None = None
    token: object = None  # OAUTHBEARER with kafka-python/aiokafka: an oauth_tokens.TokenSource


def kafka_error_name(exc: Exception) -> str:
    """kafka-python's and aiokafka's errors carry Kafka's error name as `message`."""
    name = getattr(exc, "message", None)
    return name if isinstance(name, str) and name.isupper() else type(exc).__name__
