"""Request decoders generated as Python source from the message declarations.

`decoder(message, version)` emits one straight-line Python function per struct of that
(message, version): fixed-size numbers by `struct.unpack_from`, strings, bytes, UUIDs, bools,
arrays and the tagged-field section inline, reading from a buffer and an offset instead of a
stream, nested structs by calling their own generated function. Nothing is hand-written per
message: the same `Field` declarations that `schema.KafkaStruct` reads drive the generator, and
the wire tests check both give the same result for every declared (API, version).

Declared tagged fields (rare, small) are parsed from their bytes by the construct of that field.
Responses are still built by `schema.KafkaStruct` (writing into `framing.FrameWriter`).
"""

from __future__ import annotations

import struct
import uuid

import construct as c

from trafka.wire import types as t

_FIXED = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H"}


class _Gen:
    def __init__(self):
        self.lines: list[str] = []
        self.names = 0
        self.env: dict = {
            "Container": c.Container, "UUID": uuid.UUID, "uvarint_at": t.uvarint_at,
            "StreamError": c.StreamError, "ExplicitError": c.ExplicitError,
        }
        for fmt in set(_FIXED.values()):
            self.env[f"U_{fmt}"] = struct.Struct(">" + fmt).unpack_from

    def fresh(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def value(self, out: list[str], ind: str, target: str, typ, nullable: bool, flexible: bool) -> None:
        """Lines that read one value of a primitive WireType into `target`, moving `pos`."""
        name = typ.name
        if name in _FIXED:
            fmt = _FIXED[name]
            out.append(f"{ind}{target}, = U_{fmt}(buf, pos)")
            out.append(f"{ind}pos += {struct.calcsize('>' + fmt)}")
        elif name == "bool":
            out.append(f"{ind}{target} = buf[pos] != 0")
            out.append(f"{ind}pos += 1")
        elif name == "uuid":
            out.append(f"{ind}if pos + 16 > len(buf): raise StreamError('stream ended inside a UUID')")
            out.append(f"{ind}{target} = UUID(bytes=bytes(buf[pos:pos + 16]))")
            out.append(f"{ind}pos += 16")
        elif name in ("string", "bytes", "records"):
            n = self.fresh("n")
            if flexible:
                out.append(f"{ind}{n}, pos = uvarint_at(buf, pos)")
                out.append(f"{ind}{n} -= 1")
            else:
                fmt = "h" if name == "string" else "i"
                out.append(f"{ind}{n}, = U_{fmt}(buf, pos)")
                out.append(f"{ind}pos += {2 if fmt == 'h' else 4}")
            out.append(f"{ind}if {n} < 0:")
            if nullable:
                out.append(f"{ind}    {target} = None")
            else:
                out.append(f"{ind}    raise ExplicitError('null in a non-nullable {name}')")
            out.append(f"{ind}else:")
            out.append(f"{ind}    if pos + {n} > len(buf): raise StreamError('stream ended inside a {name}')")
            if name == "string":
                out.append(f"{ind}    {target} = str(buf[pos:pos + {n}], 'utf-8')")
            else:
                out.append(f"{ind}    {target} = bytes(buf[pos:pos + {n}])")
            out.append(f"{ind}    pos += {n}")
        else:
            raise TypeError(f"no generated reader for {name}")

    def field(self, out: list[str], ind: str, target: str, f, version: int, flexible: bool) -> None:
        from trafka.wire.schema import Array

        nullable = f.is_nullable_in(version)
        if isinstance(f.type, list):
            fn = self.struct(f.type, version, flexible)
            if nullable:  # an int8 marker: negative for null (KIP-966's cursor)
                out.append(f"{ind}if buf[pos] >= 0x80:")
                out.append(f"{ind}    {target} = None")
                out.append(f"{ind}    pos += 1")
                out.append(f"{ind}else:")
                out.append(f"{ind}    {target}, pos = {fn}(buf, pos + 1)")
            else:
                out.append(f"{ind}{target}, pos = {fn}(buf, pos)")
            return
        if isinstance(f.type, Array):
            n, items, i = self.fresh("n"), self.fresh("items"), self.fresh("i")
            if flexible:
                out.append(f"{ind}{n}, pos = uvarint_at(buf, pos)")
                out.append(f"{ind}{n} -= 1")
            else:
                out.append(f"{ind}{n}, = U_i(buf, pos)")
                out.append(f"{ind}pos += 4")
            out.append(f"{ind}if {n} < 0:")
            if nullable:
                out.append(f"{ind}    {target} = None")
            else:
                out.append(f"{ind}    raise ExplicitError('null array in a non-nullable field')")
            out.append(f"{ind}else:")
            out.append(f"{ind}    if {n} > len(buf) - pos: raise StreamError('array longer than the frame')")
            out.append(f"{ind}    {items} = []")
            out.append(f"{ind}    for {i} in range({n}):")
            item = f.type.item
            x = self.fresh("x")
            if isinstance(item, list):
                fn = self.struct(item, version, flexible)
                out.append(f"{ind}        {x}, pos = {fn}(buf, pos)")
            else:
                self.value(out, ind + "        ", x, item, False, flexible)
            out.append(f"{ind}        {items}.append({x})")
            out.append(f"{ind}    {target} = {items}")
            return
        self.value(out, ind, target, f.type, nullable, flexible)

    def struct(self, fields, version: int, flexible: bool) -> str:
        fn = self.fresh("parse_struct_")
        out = [f"def {fn}(buf, pos):", "    r = Container()"]
        tagged = []
        for f in fields:
            if not f.present_in(version):
                const = self.fresh("default_")
                self.env[const] = f.default_for(version)
                out.append(f"    r[{f.name!r}] = list({const}) if type({const}) is list else {const}")
            elif f.is_tagged_in(version, flexible):
                tagged.append(f)
            else:
                v = self.fresh("v")
                self.field(out, "    ", v, f, version, flexible)
                out.append(f"    r[{f.name!r}] = {v}")
        if flexible:
            known = {}
            for f in tagged:
                default = self.fresh("default_")
                self.env[default] = f.default_for(version)
                out.append(f"    r[{f.name!r}] = {default}")
                con = self.fresh("tagged_")
                self.env[con] = f.construct(version, flexible).parse
                known[f.tag] = (f.name, con)
            out.append("    ntags, pos = uvarint_at(buf, pos)")
            out.append("    for _ in range(ntags):")
            out.append("        tag, pos = uvarint_at(buf, pos)")
            out.append("        size, pos = uvarint_at(buf, pos)")
            out.append("        if pos + size > len(buf): raise StreamError('stream ended inside a tagged field')")
            for tag, (name, con) in sorted(known.items()):
                out.append(f"        if tag == {tag}: r[{name!r}] = {con}(bytes(buf[pos:pos + size]))")
            out.append("        pos += size")
        out.append("    return r, pos")
        self.lines.append("\n".join(out))
        return fn


def decoder(fields, version: int, flexible: bool):
    """A function (buf, pos) -> (Container, pos after the struct) for one (message, version)."""
    gen = _Gen()
    top = gen.struct(fields, version, flexible)
    source = "\n\n".join(gen.lines) + "\n"
    namespace = dict(gen.env)
    exec(compile(source, f"<trafka decoder {top}>", "exec"), namespace)
    parse = namespace[top]

    def decode(buf, pos: int = 0):
        try:
            return parse(buf, pos)
        except (struct.error, IndexError):
            raise c.StreamError("stream ended inside a field") from None

    decode.source = source
    return decode
