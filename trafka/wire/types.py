"""Kafka's primitive wire types as construct objects.

Each Kafka type is a `WireType` that yields the construct for one (flexible, nullable)
combination, because the same declared field is encoded differently in flexible versions
(compact lengths) and may be nullable only in some versions.
"""

from __future__ import annotations

import io
import uuid

import construct as c


def FixedField(endian: str, fmt: str) -> c.FormatField:
    """A big-endian fixed-size number (short input raises StreamError, as construct does)."""
    return c.FormatField(endian, fmt)


Int8 = FixedField(">", "b")
Int16 = FixedField(">", "h")
Int32 = FixedField(">", "l")
Int64 = FixedField(">", "q")
UInt16 = FixedField(">", "H")
Float64 = FixedField(">", "d")


def uvarint_at(buf, pos: int) -> tuple[int, int]:
    """The unsigned varint at buf[pos:] and the position after it: the one varint decoder
    (message fields read it through read_uvarint, record fields through records.py)."""
    result = shift = 0
    while True:
        try:
            byte = buf[pos]
        except IndexError:
            raise c.StreamError("stream ended inside a varint") from None
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise c.ExplicitError("varint is longer than 10 bytes")


def read_uvarint(stream) -> int:
    """The unsigned varint at a BytesIO's position, which moves past it."""
    pos = stream.tell()
    with stream.getbuffer() as buf:
        value, end = uvarint_at(buf, pos)
    stream.seek(end)
    return value


def encode_uvarint(value: int) -> bytes:
    if value < 0:
        raise c.ExplicitError(f"unsigned varint cannot hold {value}")
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _read_exact(stream, n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise c.StreamError(f"wanted {n} bytes, stream had {len(data)}")
    return data


class LengthPrefixed(c.Construct):
    """String or bytes with an int16/int32 length (classic) or uvarint length + 1 (compact).

    A null is length -1 (classic) or 0 (compact); building None for a non-nullable field fails.
    """

    def __init__(self, *, text: bool, compact: bool, nullable: bool, wide: bool):
        super().__init__()
        self.text, self.compact, self.nullable = text, compact, nullable
        self.length = Int32 if wide else Int16

    def _parse(self, stream, context, path):
        if self.compact:
            n = read_uvarint(stream) - 1
        else:
            n = self.length._parse(stream, context, path)
        if n < 0:
            if not self.nullable:
                raise c.ExplicitError(f"null in a non-nullable field at {path}")
            return None
        data = _read_exact(stream, n)
        return data.decode("utf-8") if self.text else data

    def _build(self, obj, stream, context, path):
        if obj is None:
            if not self.nullable:
                raise c.ExplicitError(f"None given for a non-nullable field at {path}")
            stream.write(b"\x00" if self.compact else self.length.build(-1))
            return obj
        data = obj.encode("utf-8") if self.text else obj
        if self.compact:
            stream.write(encode_uvarint(len(data) + 1))
        else:
            stream.write(self.length.build(len(data)))
        stream.write(data)
        return obj


class RecordsField(LengthPrefixed):
    """Record batches: bytes on parse; on build also a sequence of buffers, written one by one
    so that batches read from segment files reach the socket without being joined first."""

    def _build(self, obj, stream, context, path):
        if not isinstance(obj, (list, tuple)):
            return super()._build(obj, stream, context, path)
        size = sum(len(part) for part in obj)
        stream.write(encode_uvarint(size + 1) if self.compact else self.length.build(size))
        for part in obj:
            stream.write(part)
        return obj


class KafkaArray(c.Construct):
    """An int32-counted (classic) or uvarint count + 1 (compact) array; null is -1 / 0."""

    def __init__(self, item, *, compact: bool, nullable: bool):
        super().__init__()
        self.item, self.compact, self.nullable = item, compact, nullable

    def _parse(self, stream, context, path):
        n = read_uvarint(stream) - 1 if self.compact else Int32._parse(stream, context, path)
        if n < 0:
            if not self.nullable:
                raise c.ExplicitError(f"null array in a non-nullable field at {path}")
            return None
        parse = self.item._parse
        return [parse(stream, context, path) for _ in range(n)]

    def _build(self, obj, stream, context, path):
        if obj is None:
            if not self.nullable:
                raise c.ExplicitError(f"None given for a non-nullable array at {path}")
            stream.write(b"\x00" if self.compact else Int32.build(-1))
            return obj
        stream.write(encode_uvarint(len(obj) + 1) if self.compact else Int32.build(len(obj)))
        build = self.item._build
        for item in obj:
            build(item, stream, context, path)
        return obj


class UuidC(c.Construct):
    """A 16-byte UUID, parsed to uuid.UUID."""

    def _parse(self, stream, context, path):
        return uuid.UUID(bytes=_read_exact(stream, 16))

    def _build(self, obj, stream, context, path):
        stream.write(obj.bytes)
        return obj


class NullableStructC(c.Construct):
    """A nullable struct field: int8 -1 for null, else 1 and the struct (KIP-966's cursor)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def _parse(self, stream, context, path):
        if _read_exact(stream, 1)[0] >= 0x80:
            return None
        return self.inner._parsereport(stream, context, path)

    def _build(self, obj, stream, context, path):
        if obj is None:
            stream.write(b"\xff")
            return obj
        stream.write(b"\x01")
        return self.inner._build(obj, stream, context, path)


class BoolC(c.Construct):
    def _parse(self, stream, context, path):
        return _read_exact(stream, 1) != b"\x00"

    def _build(self, obj, stream, context, path):
        stream.write(b"\x01" if obj else b"\x00")
        return obj


class WireType:
    """A Kafka type; `construct(flexible, nullable)` gives its encoding for one version."""

    def __init__(self, name: str, classic, compact=None, nullable_classic=None, nullable_compact=None):
        self.name = name
        self._by_mode = {
            (False, False): classic,
            (True, False): compact if compact is not None else classic,
            (False, True): nullable_classic,
            (True, True): nullable_compact,
        }

    def construct(self, flexible: bool, nullable: bool):
        built = self._by_mode[(flexible, nullable)]
        if built is None:
            raise TypeError(f"{self.name} cannot be nullable")
        return built

    def __repr__(self) -> str:
        return self.name


def _fixed(name, con):
    return WireType(name, con)


def _prefixed(name, *, text, wide):
    def make(compact, nullable):
        return LengthPrefixed(text=text, compact=compact, nullable=nullable, wide=wide)

    return WireType(name, make(False, False), make(True, False), make(False, True), make(True, True))


# The null topic id: what a response carries where it names no topic id.
ZERO_UUID = uuid.UUID(int=0)

INT8 = _fixed("int8", Int8)
INT16 = _fixed("int16", Int16)
INT32 = _fixed("int32", Int32)
INT64 = _fixed("int64", Int64)
UINT16 = _fixed("uint16", UInt16)
FLOAT64 = _fixed("float64", Float64)  # client quota values
BOOL = _fixed("bool", BoolC())
UUID = _fixed("uuid", UuidC())
STRING = _prefixed("string", text=True, wide=False)
BYTES = _prefixed("bytes", text=False, wide=True)
RECORDS = WireType(
    "records",
    RecordsField(text=False, compact=False, nullable=False, wide=True),
    RecordsField(text=False, compact=True, nullable=False, wide=True),
    RecordsField(text=False, compact=False, nullable=True, wide=True),
    RecordsField(text=False, compact=True, nullable=True, wide=True),
)



class TaggedFields(c.Construct):
    """The tagged-field section ending every flexible struct.

    Known tags (declared fields) parse to their values under their names; unknown tags are
    skipped. Parses to a dict merged into the enclosing struct by `FlexibleStruct`.
    """

    def __init__(self, known: dict[int, tuple[str, c.Construct, object]]):
        super().__init__()
        self.known = known
        self.by_name = {name: (tag, con, default) for tag, (name, con, default) in known.items()}

    def _parse(self, stream, context, path):
        values = {name: default for name, _, default in self.known.values()}
        for _ in range(read_uvarint(stream)):
            tag = read_uvarint(stream)
            data = _read_exact(stream, read_uvarint(stream))
            if tag in self.known:
                name, con, _ = self.known[tag]
                values[name] = con._parse(io.BytesIO(data), context, path)
        return values

    def _build(self, obj, stream, context, path):
        present = []
        for name, (tag, con, default) in sorted(self.by_name.items(), key=lambda kv: kv[1][0]):
            value = obj.get(name, default) if obj else default
            if value != default:
                present.append((tag, con.build(value)))
        stream.write(encode_uvarint(len(present)))
        for tag, data in present:
            stream.write(encode_uvarint(tag))
            stream.write(encode_uvarint(len(data)))
            stream.write(data)
        return obj


EMPTY_TAGGED_FIELDS = TaggedFields({})
