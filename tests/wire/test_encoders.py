"""The generated encoders (trafka.wire.codegen.encoder, what the broker answers with) write the
same bytes as the construct objects built from the same declarations, for every declared
(API, version), request and response, with sample values, nulls, empty arrays, every field left
to its default, and tagged fields present or absent; and refuse what construct refuses."""

from __future__ import annotations

import construct as c
import pytest

from trafka.wire import framing
from trafka.wire.messages import APIS
from trafka.wire.schema import Array, UndeclaredField

from testkit.wire_samples import Sampler, sample


class EmptyArrays(Sampler):
    def field(self, f):
        if isinstance(f.type, Array):
            return []
        return super().field(f)


class Defaults(Sampler):
    """Only what has no default (a non-nullable nested struct); everything else left out."""

    def struct(self, fields):
        return {f.name: self.struct(f.type) for f in fields
                if f.present_in(self.version) and isinstance(f.type, list) and not f.is_nullable_in(self.version)}


def _variants(message, version):
    flexible = message.is_flexible(version)
    yield "values", sample(message, version, False)  # tagged fields present (non-default values)
    yield "nulls", sample(message, version, True)  # nullable fields null, tagged fields absent
    yield "empty-arrays", EmptyArrays(version, flexible, False).struct(message.fields)
    yield "defaults", Defaults(version, flexible, False).struct(message.fields)


CASES = [
    pytest.param(message, version, id=f"{message.name}-v{version}")
    for api in sorted(APIS.values(), key=lambda a: a.key)
    for message in (api.request, api.response)
    for version in range(message.version_range.lo, message.version_range.hi + 1)
]


def _generated(message, version, obj) -> bytes:
    parts: list = []
    message.encoder(version)(obj, parts.append)
    return b"".join(parts)


@pytest.mark.parametrize("message,version", CASES)
def test_generated_encoder_matches_the_declaration(message, version):
    for name, obj in _variants(message, version):
        expected = message.struct(version).build(obj)
        assert _generated(message, version, obj) == expected, name
        assert message.build(obj, version) == expected, name


@pytest.mark.parametrize("message,version", CASES)
def test_misspelt_keys_are_refused(message, version):
    obj = sample(message, version, False)
    with pytest.raises(UndeclaredField, match="no_such_field"):
        _generated(message, version, {**obj, "no_such_field": 1})
    nested = _first_nested(message.fields, obj, version)
    if nested is not None:
        nested["no_such_field_inside"] = 1
        with pytest.raises(UndeclaredField, match="no_such_field_inside"):
            _generated(message, version, obj)


def _first_nested(fields, obj, version):
    for f in fields:
        if not f.present_in(version) or obj.get(f.name) is None:
            continue
        item = f.type.item if isinstance(f.type, Array) else f.type
        if isinstance(item, list):
            value = obj[f.name]
            if isinstance(f.type, Array):
                if not value:
                    continue
                value = value[0]
            if isinstance(value, dict):
                return value
    return None


def test_values_the_declaration_cannot_carry_are_refused():
    produce = APIS[0].response
    ok = {"responses": [{"name": "t", "partition_responses": [{"index": 0, "error_code": 0, "base_offset": 5}]}]}
    for bad in (
        {"responses": [{"name": None, "partition_responses": []}]},  # null in a non-nullable string
        {"responses": [{"name": "t", "partition_responses": [{"index": 2**31}]}]},  # int32 overflow
        {"responses": None},  # null in a non-nullable array
        {"responses": [{"name": "t", "partition_responses": [{"index": "zero"}]}]},
    ):
        for version in (7, 9):
            with pytest.raises(c.ConstructError):
                produce.struct(version).build(bad)
            with pytest.raises(c.ConstructError):
                _generated(produce, version, bad)
    assert _generated(produce, 9, ok) == produce.struct(9).build(ok)


class Slice:
    """Stands for a storage FileSlice: not a buffer, has a length; the frame keeps it by reference."""

    def __init__(self, data: bytes):
        self.data = data

    def __len__(self):
        return len(self.data)

    def fileno(self):
        return -1

    def read(self):
        return self.data


def test_a_part_that_is_neither_bytes_nor_a_file_range_is_refused():
    body = {"responses": [{"topic": "t", "partitions": [{"partition_index": 0, "records": ["not bytes"]}]}]}
    with pytest.raises(c.ConstructError, match="str"):
        framing.encode_response(APIS[1], 12, 1, body)


@pytest.mark.parametrize("version", [4, 11, 12])
def test_record_parts_stay_by_reference_in_the_frame(version):
    fetch = APIS[1]
    piece = Slice(b"R" * 40_000)
    def body(records):
        return {"responses": [{"topic": "t", "partitions": [
            {"partition_index": 0, "high_watermark": 3, "records": records},
            {"partition_index": 1, "high_watermark": 0, "records": b""}]}]}
    parts = framing.encode_response(fetch, version, 77, body([b"small", piece, b"tail"]))
    assert piece in parts and len(parts) == 3
    flat = b"".join(p.data if p is piece else p for p in parts)
    whole = framing.encode_response(fetch, version, 77, body(b"small" + piece.data + b"tail"))
    assert [flat] == whole
    (size,) = framing.SIZE.unpack_from(flat)
    assert size == len(flat) - 4
    correlation_id, decoded = framing.decode_response(fetch, version, flat[4:])
    assert correlation_id == 77
    assert decoded.responses[0].partitions[0].records == b"small" + piece.data + b"tail"


def _shared(obj, fields, version):
    """obj with every array of structs made a codegen.Shared, at every depth."""
    from trafka.wire.codegen import Shared

    if not isinstance(obj, dict):
        return obj
    out = dict(obj)
    for f in fields:
        value = obj.get(f.name)
        if value is None or not f.present_in(version):
            continue
        if isinstance(f.type, Array) and isinstance(f.type.item, list):
            out[f.name] = Shared(_shared(item, f.type.item, version) for item in value)
        elif isinstance(f.type, list):
            out[f.name] = _shared(value, f.type, version)
    return out


@pytest.mark.parametrize("message,version", CASES)
def test_shared_struct_arrays_encode_as_lists_and_once(message, version):
    """A Shared array of structs gives the same bytes as a list, and keeps them: the second
    encoding of the same value writes what the first kept (checked by changing the kept bytes)."""
    from trafka.wire.codegen import Shared

    for name, obj in _variants(message, version):
        shared = _shared(obj, message.fields, version)
        expected = message.struct(version).build(obj)
        assert _generated(message, version, shared) == expected, name
        assert _generated(message, version, shared) == expected, name
        kept = [v for v in shared.values() if type(v) is Shared and v.encoded]
        for value in kept:
            (key, data), = value.encoded.items()
            value.encoded[key] = b"\x00KEPT\x00"
        if kept:
            assert b"\x00KEPT\x00" in _generated(message, version, shared), name


def test_the_crc32c_extension_loads_without_the_packages_metadata_reading_init():
    """Every start reads or writes a metadata batch, so the CRC-32C function is loaded at start:
    it must be the crc32c package's C function (the check value right) without the package's
    __init__, which imports importlib.metadata and argparse (~40 ms of a start)."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from trafka.wire.records import crc32c\n"
            "assert crc32c(b'123456789') == 0xE3069283\n"
            "print(sorted(m for m in ('importlib.metadata', 'argparse', 'crc32c') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
