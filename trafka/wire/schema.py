"""Messages declared once, field by field with version ranges, assembled per version.

A `Message` lists `Field`s. Each field says in which versions it exists, in which it may be
null, and (for flexible versions) whether it travels as a tagged field. `Message.struct(v)`
turns the declaration into one construct object for version v, assembled on first use and
cached: the reference. What the broker decodes and encodes with is generated from the same
declarations (`Message.decoder(v)`, `Message.encoder(v)`, `Message.response_decoder(v)`:
trafka/wire/codegen.py), checked against the reference in tests/wire. The fields themselves live
in trafka/wire/declaration.py.

Version ranges are written the way Kafka's own schema docs write them: "3+", "0-2", "none".
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import construct as c

from trafka.wire import codegen
from trafka.wire.declaration import NO_VERSIONS, Array, Field, KafkaStruct, UndeclaredField, Versions, compile_struct


class MalformedMessage(ValueError):
    """Bytes that do not parse as the declared message version."""


@dataclass
class Message:
    """One request or response body, declared once for every version."""

    name: str
    versions: str
    flexible: str
    fields: list[Field]

    def __post_init__(self):
        self._versions = Versions.parse(self.versions)
        self._flexible = Versions.parse(self.flexible)

    @property
    def version_range(self) -> Versions:
        return self._versions

    def is_flexible(self, version: int) -> bool:
        return version in self._flexible

    @functools.cache
    def struct(self, version: int) -> c.Construct:
        if version not in self._versions:
            raise ValueError(f"{self.name} has no version {version}")
        return compile_struct(self.fields, version, self.is_flexible(version))

    @functools.cache
    def decoder(self, version: int):
        """The generated decoder of this version (trafka.wire.codegen): (buf, pos) -> (body, end)."""
        if version not in self._versions:
            raise ValueError(f"{self.name} has no version {version}")
        return codegen.decoder(self.fields, version, self.is_flexible(version))

    @functools.cache
    def encoder(self, version: int):
        """The generated encoder of this version (trafka.wire.codegen): (obj, append) appends the
        body's bytes to a list; what the broker answers with."""
        if version not in self._versions:
            raise ValueError(f"{self.name} has no version {version}")
        return codegen.encoder(self.fields, version, self.is_flexible(version), self.name)

    def __hash__(self):
        return id(self)

    def parse(self, data, version: int) -> c.Container:
        return self.decoder(version)(data)[0]

    def parse_checked(self, data, version: int) -> c.Container:
        """`parse`, with whatever malformed bytes raise turned into one `MalformedMessage`
        (for bytes read back from a log, where a bad record is skipped with a log line)."""
        try:
            return self.parse(data, version)
        except (c.ConstructError, UnicodeDecodeError, OverflowError, ValueError, IndexError) as exc:
            raise MalformedMessage(f"{self.name} v{version}: {exc}") from None

    def build(self, obj: dict, version: int) -> bytes:
        parts: list = []
        self.encoder(version)(obj, parts.append)
        return b"".join(parts)


__all__ = ["NO_VERSIONS", "MalformedMessage", "Array", "Field", "KafkaStruct", "Message", "UndeclaredField", "Versions", "compile_struct"]
