"""Sample values for any declared message, shared by the wire tests."""

from __future__ import annotations

import uuid

from trafka.wire.schema import Array, Field, Message


class Sampler:
    """Distinct, non-default values for every field of one version of a message."""

    def __init__(self, version: int, flexible: bool, nulls: bool):
        self.version, self.flexible, self.nulls = version, flexible, nulls
        self.counter = 0

    def struct(self, fields: list[Field]) -> dict:
        return {f.name: self.field(f) for f in fields if f.present_in(self.version)}

    def field(self, f: Field):
        if self.nulls and (f.is_nullable_in(self.version) or f.is_tagged_in(self.version, self.flexible)):
            return f.default_for(self.version)
        if isinstance(f.type, list):
            return self.struct(f.type)
        if isinstance(f.type, Array):
            item = f.type.item
            if isinstance(item, list):
                return [self.struct(item) for _ in range(2)]
            return [self.primitive(item.name, f.name) for _ in range(2)]
        return self.primitive(f.type.name, f.name)

    def primitive(self, type_name: str, field_name: str):
        self.counter += 1
        n = self.counter
        match type_name:
            case "int8":
                return n % 100 + 1
            case "int16":
                return n * 7 + 1
            case "uint16":
                return n * 13 + 1
            case "int32":
                return n * 100_003 + 1
            case "int64":
                return n * 10_000_000_019 + 1
            case "float64":
                return n + 0.5
            case "bool":
                return True
            case "uuid":
                return uuid.UUID(int=n * 0x1_0000_0001)
            case "string":
                return f"{field_name}-{n}-ü"
            case "bytes" | "records":
                return bytes(range(n % 7, n % 7 + 9))
        raise AssertionError(f"no sample for type {type_name}")


def sample(message: Message, version: int, nulls: bool) -> dict:
    return Sampler(version, message.is_flexible(version), nulls).struct(message.fields)


def on_the_wire(fields: list[Field], parsed: dict, version: int) -> dict:
    """A parsed message without the fields its version does not carry, after checking that each
    of those holds its declared default (parsing gives every declared field)."""
    out = {}
    for f in fields:
        value = parsed[f.name]
        if not f.present_in(version):
            assert value == f.default_for(version), f"{f.name}: absent, {value!r} is not its default"
            continue
        item = f.type.item if isinstance(f.type, Array) else f.type
        if isinstance(item, list) and value is not None:
            if isinstance(f.type, Array):
                value = [on_the_wire(item, v, version) for v in value]
            else:
                value = on_the_wire(item, value, version)
        out[f.name] = value
    assert set(parsed) == {f.name for f in fields}, f"parsed {sorted(parsed)} is not every declared field"
    return out
