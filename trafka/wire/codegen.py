"""Decoders and encoders generated as Python source from the message declarations.

`decoder(message, version)` emits one straight-line Python function per struct of that
(message, version): fixed-size numbers by `struct.unpack_from`, strings, bytes, UUIDs, bools,
arrays and the tagged-field section inline, reading from a buffer and an offset instead of a
stream, nested structs by calling their own generated function. Nothing is hand-written per
message: the same `Field` declarations that `declaration.KafkaStruct` reads drive the generator, and
the wire tests check both give the same result for every declared (API, version).

Declared tagged fields (rare, small) are parsed from their bytes by the construct of that field.

`encoder(message, version)` (further down) is the other direction, used for every response the
broker sends (framing.encode_response) and by `Message.build`. The construct objects
(`Message.struct(v)`, declaration.KafkaStruct) stay as the reference: tests/wire/test_codegen.py and
tests/wire/test_encoders.py check both directions against them for every declared (API, version).
"""

from __future__ import annotations

import struct
import uuid

import construct as c

from trafka.wire import types as t
from trafka.wire.declaration import Array, UndeclaredField

_FIXED = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H", "float64": "d"}


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


# ---------------------------------------------------------------------------------------------
# Response (and request) encoders.
#
# `encoder(fields, version, flexible)` emits one straight-line function per (message, version):
# consecutive fixed-size fields (numbers, bools, UUIDs) go out in one `struct.pack` call, strings,
# bytes and arrays inline, nested structs inlined into their parent's loop, the tagged-field
# section written from the fields whose value differs from their default (as
# `types.TaggedFields` does). The function appends bytes to a list; record data given as a list
# of buffers (storage FileSlices for sendfile) is appended part by part, by reference.
#
# An array of structs given as a `Shared` list is encoded once per field and version and its
# bytes kept on the list: an answer that carries the same array many times (5,000 partitions of
# 500 topics alike in a Metadata answer) or answers that carry it again encode it once. The
# function that encodes it is generated at the first Shared value of that field (_SharedEncoder).


class Shared(list):
    """A struct array's value whose encoding is kept on it, per field and version. Its holder
    must not change it (or its items) once it has been encoded; build a new one instead."""

    __slots__ = ("encoded",)

    def __init__(self, items=()):
        super().__init__(items)
        self.encoded: dict = {}

_PACK = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H", "float64": "d", "bool": "?", "uuid": "16s"}
_UV1 = [bytes([i]) for i in range(128)]
_SHORT = 32  # compact arrays of numbers up to this long are written by a precompiled Struct


def _uvarint(value: int) -> bytes:
    if value < 128:
        if value < 0:
            raise c.ExplicitError(f"unsigned varint cannot hold {value}")
        return _UV1[value]
    return t.encode_uvarint(value)


class _EncGen:
    def __init__(self):
        self.lines: list[str] = []
        self.names = 0
        self.env: dict = {"uv": _uvarint, "UV1": _UV1, "pack": struct.pack, "undeclared": _undeclared,
                          "Shared": Shared}
        self.shared: dict[int, str] = {}  # id(field) -> the name of its _SharedEncoder

    def fresh(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def const(self, value, prefix: str = "K") -> str:
        name = self.fresh(prefix)
        self.env[name] = value
        return name

    def packer(self, fmt: str) -> str:
        name = "P_" + fmt.replace("16s", "U").replace("?", "B_")
        if name not in self.env:
            self.env[name] = struct.Struct(">" + fmt).pack
        return name

    # -- pending fixed-size run ---------------------------------------------------------------
    def flush(self, out, ind, run):
        if run:
            fmt = "".join(f for f, _ in run)
            if all(e.lstrip("-").isdigit() for _, e in run):  # constants: packed once, here
                out.append(f"{ind}a({self.const(struct.pack('>' + fmt, *(int(e) for _, e in run)), 'B')})")
            else:
                out.append(f"{ind}a({self.packer(fmt)}({', '.join(e for _, e in run)}))")
            run.clear()

    def length(self, out, ind, run, n_expr: str, flexible: bool, wide: bool):
        """The length (or count) prefix `n_expr` of a string/bytes/array, not null."""
        if flexible:
            self.flush(out, ind, run)
            n = self.fresh("n")
            out.append(f"{ind}{n} = {n_expr} + 1")
            out.append(f"{ind}a(UV1[{n}] if {n} < 128 else uv({n}))")
        else:
            run.append(("i" if wide else "h", n_expr))

    def null(self, out, ind, run, flexible: bool, wide: bool):
        if flexible:
            run.append(("B", "0"))
        else:
            run.append(("i" if wide else "h", "-1"))

    def null_or_value(self, out, ind, v: str, nullable: bool, flexible: bool, wide: bool, what: str) -> str:
        """Lines writing the null marker when `v` is None and the field may be null (else
        refusing None); returns the indentation the value's own lines go at."""
        if not nullable:
            out.append(f"{ind}if {v} is None: raise ExplicitError('None given for a non-nullable {what}')")
            return ind
        out.append(f"{ind}if {v} is None:")
        sub: list = []
        self.null(out, ind + "    ", sub, flexible, wide)
        self.flush(out, ind + "    ", sub)
        out.append(f"{ind}else:")
        return ind + "    "

    def primitive(self, out, ind, run, expr: str, typ, nullable: bool, flexible: bool, what: str):
        """Lines writing one primitive value given by the expression `expr` (evaluated once)."""
        name = typ.name
        if name in _PACK:
            if name == "uuid":
                run.append(("16s", f"{expr}.bytes"))
            else:
                run.append((_PACK[name], expr))
            return
        if name not in ("string", "bytes", "records"):
            raise TypeError(f"no generated writer for {name}")
        wide = name != "string"
        v = self.fresh("s")
        out_expr = expr
        self.flush(out, ind, run)
        out.append(f"{ind}{v} = {out_expr}")
        body_ind = self.null_or_value(out, ind, v, nullable, flexible, wide, what)
        sub: list = []
        if name == "string":
            out.append(f"{body_ind}{v} = {v}.encode('utf-8')")
        elif name == "records":
            out.append(f"{body_ind}if type({v}) is list or type({v}) is tuple:")
            sub2: list = []
            self.length(out, body_ind + "    ", sub2, f"sum(map(len, {v}))", flexible, True)
            self.flush(out, body_ind + "    ", sub2)
            out.append(f"{body_ind}    for p in {v}: a(p)")
            out.append(f"{body_ind}else:")
            body_ind += "    "
        self.length(out, body_ind, sub, f"len({v})", flexible, wide)
        self.flush(out, body_ind, sub)
        out.append(f"{body_ind}a({v})")

    def field(self, out, ind, run, expr: str, f, version: int, flexible: bool):
        nullable = f.is_nullable_in(version)
        if isinstance(f.type, list):
            v = self.fresh("o")
            self.flush(out, ind, run)
            out.append(f"{ind}{v} = {expr}")
            if nullable:  # an int8 marker: -1 for null, 1 before the struct (KIP-966's cursor)
                out.append(f"{ind}if {v} is None:")
                out.append(f"{ind}    a(b'\\xff')")
                out.append(f"{ind}else:")
                sub: list = [("b", "1")]
                self.struct_body(out, ind + "    ", sub, v, f.type, version, flexible, f.name)
                self.flush(out, ind + "    ", sub)
            else:
                self.struct_body(out, ind, run, v, f.type, version, flexible, f.name)
            return
        if isinstance(f.type, Array):
            v = self.fresh("arr")
            self.flush(out, ind, run)
            out.append(f"{ind}{v} = {expr}")
            body = self.null_or_value(out, ind, v, nullable, flexible, True, f"array {f.name}")
            item = f.type.item
            sub = []
            if not isinstance(item, list) and item.name in _PACK and item.name != "uuid":
                fmt = _PACK[item.name]
                if flexible:  # short arrays: count byte and items by one precompiled Struct
                    table = self.const([struct.Struct(f">B{k}{fmt}").pack for k in range(_SHORT)], "PA")
                    n = self.fresh("n")
                    out.append(f"{body}{n} = len({v})")
                    out.append(f"{body}a({table}[{n}]({n} + 1, *{v}) if {n} < {_SHORT} else "
                               f"uv({n} + 1) + pack('>%d{fmt}' % {n}, *{v}))")
                else:
                    out.append(f"{body}a(pack('>i%d{fmt}' % len({v}), len({v}), *{v}))")
                return
            if isinstance(item, list):
                fn = self.shared_encoder(f, item, version, flexible)
                e = self.fresh("e")
                out.append(f"{body}if type({v}) is Shared:")
                out.append(f"{body}    {e} = {v}.encoded.get({fn}.key)")
                out.append(f"{body}    if {e} is None: {e} = {v}.encoded[{fn}.key] = {fn}({v})")
                out.append(f"{body}    a({e})")
                out.append(f"{body}else:")
                self.struct_array(out, body + "    ", v, item, version, flexible, f.name)
                return
            self.length(out, body, sub, f"len({v})", flexible, True)
            self.flush(out, body, sub)
            x = self.fresh("x")
            out.append(f"{body}for {x} in {v}:")
            self.primitive(out, body + "    ", sub, x, item, False, flexible, f.name)
            self.flush(out, body + "    ", sub)
            return
        self.primitive(out, ind, run, expr, f.type, nullable, flexible, f.name)

    def shared_encoder(self, f, item, version: int, flexible: bool) -> str:
        """The name of field `f`'s _SharedEncoder in the generated code (one per field)."""
        if id(f) not in self.shared:
            self.shared[id(f)] = self.const(_SharedEncoder(f, item, version, flexible), "SH")
        return self.shared[id(f)]

    def struct_array(self, out, ind, v: str, item, version: int, flexible: bool, path: str):
        """Lines writing the array of structs `v` (not null): its length, then each struct."""
        sub: list = []
        self.length(out, ind, sub, f"len({v})", flexible, True)
        self.flush(out, ind, sub)
        x = self.fresh("x")
        out.append(f"{ind}for {x} in {v}:")
        self.struct_body(out, ind + "    ", sub, x, item, version, flexible, path)
        self.flush(out, ind + "    ", sub)

    def struct_body(self, out, ind, run, obj: str, fields, version: int, flexible: bool, path: str):
        declared = self.const(frozenset(f.name for f in fields), "D")
        self.flush(out, ind, run)
        out.append(f"{ind}if not {declared}.issuperset({obj}): undeclared({obj}, {declared}, {path!r})")
        g = self.fresh("g")
        out.append(f"{ind}{g} = {obj}.get")
        tagged = []
        for f in fields:
            if not f.present_in(version):
                continue
            if f.is_tagged_in(version, flexible):
                tagged.append(f)
                continue
            default = f.default_for(version)
            if default is None or type(default) in (int, bool, str, bytes):
                dexpr = repr(default)
            else:
                dexpr = self.const(default)
            self.field(out, ind, run, f"{g}({f.name!r}, {dexpr})", f, version, flexible)
        if not flexible:
            return
        if not tagged:
            run.append(("B", "0"))
            return
        self.flush(out, ind, run)
        present = self.fresh("tags")
        out.append(f"{ind}{present} = []")
        for f in sorted(tagged, key=lambda f: f.tag):
            default = self.const(f.default_for(version))
            fn = self.tagged_encoder(f, version, flexible)
            v = self.fresh("t")
            out.append(f"{ind}{v} = {g}({f.name!r}, {default}) if {obj} else {default}")
            out.append(f"{ind}if {v} != {default}:")
            d = self.fresh("d")
            out.append(f"{ind}    {d} = {fn}({v})")
            out.append(f"{ind}    {present}.append(UV1[{f.tag}] if {f.tag} < 128 else uv({f.tag}))")
            out.append(f"{ind}    {present}.append(uv(len({d})))")
            out.append(f"{ind}    {present}.append({d})")
        out.append(f"{ind}a(uv(len({present}) // 3))")
        out.append(f"{ind}for p in {present}: a(p)")

    def tagged_encoder(self, f, version: int, flexible: bool) -> str:
        """A function value -> bytes of one tagged field (its own encoding, as construct's)."""
        fn = self.fresh("enc_tagged_")
        out = [f"def {fn}(value):", "    parts = []", "    a = parts.append"]
        run: list = []
        self.field(out, "    ", run, "value", f, version, flexible)
        self.flush(out, "    ", run)
        out.append("    return b''.join(parts)")
        self.lines.append("\n".join(out))
        return fn


def _undeclared(obj, declared, path):
    if not isinstance(obj, dict):
        raise c.ExplicitError(f"{path}: expected a dict, got {type(obj).__name__}")
    raise UndeclaredField(f"undeclared field(s) {sorted(set(obj) - declared)} at {path}")


class _SharedEncoder:
    """Field `f`'s struct array as bytes (array -> bytes), for a Shared value; its source is
    generated and compiled at the first Shared value it meets, so the encoders of messages that
    never carry one pay nothing for it. `key`: what the bytes are kept under on the value, the
    same for every encoder of this field and version (their bytes are the same)."""

    def __init__(self, f, item, version: int, flexible: bool):
        self.key = (id(f), version, flexible)
        self._args = (f, item, version, flexible)
        self._fn = None

    def __call__(self, value) -> bytes:
        if self._fn is None:
            f, item, version, flexible = self._args
            gen = _EncGen()
            out = ["def encode_array(v, a):"]
            gen.struct_array(out, "    ", "v", item, version, flexible, f.name)
            self._fn = _compiled(gen, out, "encode_array", f"<trafka shared encoder {f.name} v{version}>")
        parts: list = []
        self._fn(value, parts.append)
        return b"".join(parts)


def _compiled(gen: _EncGen, out: list[str], fn: str, label: str):
    gen.lines.append("\n".join(out))
    source = "\n\n".join(gen.lines) + "\n"
    namespace = dict(gen.env, ExplicitError=c.ExplicitError)
    exec(compile(source, label, "exec"), namespace)
    namespace[fn].source = source
    return namespace[fn]


def encoder(fields, version: int, flexible: bool, name: str = "body"):
    """A function (obj, append) appending the encoding of one (message, version) to a list."""
    gen = _EncGen()
    out = ["def encode_body(o, a):"]
    run: list = []
    gen.struct_body(out, "    ", run, "o", fields, version, flexible, name)
    gen.flush(out, "    ", run)
    body = _compiled(gen, out, "encode_body", f"<trafka encoder {name} v{version}>")
    source = body.source

    def encode(obj, append):
        try:
            body(obj, append)
        except (struct.error, TypeError, AttributeError, OverflowError, UnicodeEncodeError) as exc:
            raise EncodingError(f"{name} v{version}: {exc}") from exc

    encode.source = source
    return encode


class EncodingError(c.ExplicitError):
    """A value the declaration cannot carry (a None where null is not allowed, a number out of
    range, a wrong type)."""
