"""What a coordinator writes to its internal topic, and the one way to read it back.

Every internal topic trafka keeps (`__consumer_offsets`, `__transaction_state`, and the ones to
come) stores records whose key and value start with a big-endian int16 version, then a body
declared as a `trafka.wire.schema.Message`. `versioned` writes one; `split_version` and
`parse_versioned` read one back. Whatever cannot be read (too short, a version this broker does
not know because a newer Kafka wrote it, damaged bytes) is one exception, `UnknownRecord`: the
replaying shard skips the record with a log line, as Kafka's loaders do.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, Callable

from trafka.wire.schema import MalformedMessage, Message

VERSION = struct.Struct(">h")


class UnknownRecord(ValueError):
    """A key or value this broker cannot read: a version it does not know, or damaged bytes."""


def versioned(message: Message, version: int, body: dict) -> bytes:
    """`body` as `message` version `version`, behind its int16 version prefix."""
    return VERSION.pack(version) + message.build(body, version)


def split_version(data: bytes, what: str) -> tuple[int, bytes]:
    """(version, body) of versioned bytes; UnknownRecord when there is no version to read."""
    if data is None or len(data) < 2:
        raise UnknownRecord(f"{what}: {0 if data is None else len(data)} bytes is too short")
    (version,) = VERSION.unpack_from(data)
    return version, data[2:]


def parse_versioned(data: bytes, message: Message, *, newer_as_newest: bool = False):
    """The parsed body of versioned bytes. A version `message` does not declare is UnknownRecord,
    or, with `newer_as_newest` (formats whose newer versions only append fields, such as the
    consumer protocol), read as the newest version declared."""
    version, body = split_version(data, message.name)
    if version not in message.version_range:
        if not (newer_as_newest and version > message.version_range.hi):
            raise UnknownRecord(f"{message.name} version {version} is not known")
        version = message.version_range.hi
    try:
        return message.parse_checked(body, version)
    except MalformedMessage as exc:
        raise UnknownRecord(str(exc)) from None


@dataclass(frozen=True)
class CoordinatorRecord:
    """One record a coordinator writes: versioned key bytes and value bytes (None: a tombstone)."""

    key: bytes
    value: bytes | None


@dataclass
class CoordinatorResult:
    """What a coordinator operation returns to the runtime: the records to append and the
    response to answer once they are written.

    The operation itself changes nothing. After the append the runtime applies the result:
    `apply(base_offset)` when the operation gives one (it installs what the operation prepared,
    for state that is not all in records, such as a group's members waiting in a rebalance;
    `base_offset` is where the first record was written, -1 when there were none), else
    `shard.replay` of each record, the same code that loads the shard at start-up."""

    records: list[CoordinatorRecord] = field(default_factory=list)
    response: Any = None
    apply: Callable[[int], None] | None = None
