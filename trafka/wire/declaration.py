"""A message's fields: version ranges, nullability, tags, defaults, and the construct object each
version of a struct assembles to (`compile_struct`, the reference the generated codec is checked
against, and the parser of declared tagged fields).

The bottom of the codec: `codegen` reads these declarations to generate decoders and encoders,
and `schema.Message` ties both together, so imports go declaration <- codegen <- schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from functools import cache

import construct as c

from trafka.wire import types as t


@dataclass(frozen=True)
class Versions:
    lo: int
    hi: int | None  # None: no upper bound

    @staticmethod
    @cache  # a few dozen specs among the ~3,600 fields' ranges read at import
    def parse(spec: str | None) -> "Versions":
        if spec is None or spec == "none":
            return NO_VERSIONS
        if spec.endswith("+"):
            return Versions(int(spec[:-1]), None)
        lo, _, hi = spec.partition("-")
        return Versions(int(lo), int(hi or lo))

    def __contains__(self, version: int) -> bool:
        return self.lo <= version and (self.hi is None or version <= self.hi)


NO_VERSIONS = Versions(1, 0)


@dataclass(frozen=True)
class Array:
    """An array of a primitive type or of a nested struct (a list of Fields)."""

    item: "t.WireType | list[Field]"


_MISSING = object()


@dataclass
class Field:
    name: str
    type: "t.WireType | Array | list[Field]"
    versions: str = "0+"
    nullable: str | None = None
    tag: int | None = None
    tagged: str | None = None
    default: object = _MISSING
    _versions: Versions = dc_field(init=False, repr=False)
    _nullable: Versions = dc_field(init=False, repr=False)
    _tagged: Versions = dc_field(init=False, repr=False)

    def __post_init__(self):
        self._versions = Versions.parse(self.versions)
        self._nullable = Versions.parse(self.nullable)
        self._tagged = Versions.parse(self.tagged)
        if (self.tag is None) != (self.tagged is None):
            raise ValueError(f"field {self.name}: tag and tagged go together")

    def present_in(self, version: int) -> bool:
        return version in self._versions

    def is_nullable_in(self, version: int) -> bool:
        return version in self._nullable

    def is_tagged_in(self, version: int, flexible: bool) -> bool:
        return flexible and version in self._tagged

    def default_for(self, version: int):
        if self.default is not _MISSING:
            return self.default
        if self.is_nullable_in(version) or (not self.present_in(version) and self._nullable != NO_VERSIONS):
            return None
        if isinstance(self.type, (Array,)):
            return []
        if isinstance(self.type, list):
            return None  # a nested struct must be given when it exists
        return _TYPE_DEFAULTS.get(self.type.name, 0)

    def construct(self, version: int, flexible: bool) -> c.Construct:
        nullable = self.is_nullable_in(version)
        if isinstance(self.type, list):
            struct = compile_struct(self.type, version, flexible)
            return t.NullableStructC(struct) if nullable else struct
        if isinstance(self.type, Array):
            item = self.type.item
            item_con = (
                compile_struct(item, version, flexible)
                if isinstance(item, list)
                else item.construct(flexible, False)
            )
            return t.KafkaArray(item_con, compact=flexible, nullable=nullable)
        return self.type.construct(flexible, nullable)


_TYPE_DEFAULTS = {"string": "", "bytes": b"", "records": b"", "bool": False, "uuid": t.ZERO_UUID}  # noqa: E501


class KafkaStruct(c.Construct):
    """Fields in order, then (flexible versions) the tagged-field section.

    The boundary is strict both ways. Parsing gives every declared field: those the version
    does not carry get their declared default (`absent`), so handlers never repeat defaults.
    Building fills fields the object leaves out with their defaults, so handlers only name what
    they mean, but a name the message never declares (in any version) is an error: a misspelt
    response key fails loudly instead of sending the default.
    """

    def __init__(
        self,
        fields: list[tuple[str, c.Construct, object]],
        tagged: t.TaggedFields | None,
        absent: list[tuple[str, object]] = (),
        declared: frozenset[str] = frozenset(),
    ):
        super().__init__()
        self.fields = fields
        self.tagged = tagged
        self.absent = list(absent)
        self.declared = declared

    def _parse(self, stream, context, path):
        result = c.Container()
        for name, con, _ in self.fields:
            result[name] = con._parse(stream, context, path)
        if self.tagged is not None:
            result.update(self.tagged._parse(stream, context, path))
        for name, default in self.absent:
            result[name] = list(default) if type(default) is list else default
        return result

    def _check_names(self, obj, path):
        if not self.declared.issuperset(obj):
            raise UndeclaredField(f"undeclared field(s) {sorted(set(obj) - self.declared)} at {path}")

    def _build(self, obj, stream, context, path):
        self._check_names(obj, path)
        for name, con, default in self.fields:
            con._build(obj.get(name, default), stream, context, path)
        if self.tagged is not None:
            self.tagged._build(obj, stream, context, path)
        return obj


class UndeclaredField(c.ConstructError):
    """A response (or request) was built with a name its message does not declare."""


def compile_struct(fields: list[Field], version: int, flexible: bool) -> KafkaStruct:
    regular, tagged, absent = [], {}, []
    for f in fields:
        if not f.present_in(version):
            absent.append((f.name, f.default_for(version)))
            continue
        con = f.construct(version, flexible)
        if f.is_tagged_in(version, flexible):
            tagged[f.tag] = (f.name, con, f.default_for(version))
        else:
            regular.append((f.name, con, f.default_for(version)))
    declared = frozenset(f.name for f in fields)
    return KafkaStruct(regular, t.TaggedFields(tagged) if flexible else None, absent, declared)
