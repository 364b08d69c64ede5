"""The message DSL itself: version ranges, nullability, classic vs compact, tagged fields."""

from __future__ import annotations

import construct as c
import pytest

from trafka.wire.framing import MalformedRequest, decode_request, encode_request, peek_header
from trafka.wire.messages import APIS
from trafka.wire.messages.api_versions import API as API_VERSIONS
from trafka.wire.schema import Array, Field, Message, Versions
from trafka.wire.types import INT16, INT32, INT64, STRING, encode_uvarint

from testkit.wire_samples import on_the_wire, sample


@pytest.mark.parametrize(
    "spec,inside,outside",
    [
        ("3+", [3, 4, 100], [0, 2]),
        ("0-2", [0, 1, 2], [3, 7]),
        ("5", [5], [4, 6]),
        ("none", [], [0, 1, 5]),
        (None, [], [0, 1]),
    ],
)
def test_version_ranges(spec, inside, outside):
    versions = Versions.parse(spec)
    assert all(v in versions for v in inside)
    assert not any(v in versions for v in outside)


def test_field_exists_only_in_its_versions():
    message = Message("M", "0-3", "none", [Field("a", INT16), Field("b", INT32, "2+"), Field("c", INT16, "0-1")])
    assert message.build({"a": 1, "b": 2, "c": 3}, 1) == b"\x00\x01\x00\x03"
    assert message.build({"a": 1, "b": 2, "c": 3}, 2) == b"\x00\x01\x00\x00\x00\x02"
    # The wire carries a and b; c, absent in v2, parses to its default so handlers never repeat it.
    assert message.parse(b"\x00\x01\x00\x00\x00\x02", 2) == {"a": 1, "b": 2, "c": 0}
    with pytest.raises(ValueError):
        message.struct(4)


def test_absent_fields_parse_to_their_declared_defaults():
    message = Message("M", "0-3", "none", [
        Field("a", INT16), Field("b", INT32, "2+", default=-1), Field("s", STRING, "3+", nullable="3+"),
        Field("xs", Array([Field("p", INT32), Field("e", INT32, "1+", default=-1)]), "0+"),
    ])
    assert message.parse(b"\x00\x01\x00\x00\x00\x01\x00\x00\x00\x07", 0) == {
        "a": 1, "b": -1, "s": None, "xs": [{"p": 7, "e": -1}]}


def test_building_an_undeclared_name_is_an_error():
    message = Message("M", "0-3", "none", [
        Field("a", INT16), Field("b", INT32, "2+"),
        Field("xs", Array([Field("high_watermark", INT64)])),
    ])
    # b is declared (from v2): naming it in v1 is fine and leaves it out of the bytes.
    assert message.build({"a": 1, "b": 2, "xs": []}, 1) == b"\x00\x01\x00\x00\x00\x00"
    with pytest.raises(c.ConstructError, match="high_watermak"):
        message.build({"a": 1, "xs": [{"high_watermak": 5}]}, 1)
    with pytest.raises(c.ConstructError, match="bb"):
        message.build({"a": 1, "bb": 2}, 3)


NULLABLE = Message("N", "0-1", "1+", [Field("s", STRING, nullable="1+"), Field("xs", Array(INT32), nullable="1+")])


def test_nullable_only_where_declared():
    assert NULLABLE.build({"s": None, "xs": None}, 1) == b"\x00\x00\x00"
    assert NULLABLE.parse(b"\x00\x00\x00", 1) == {"s": None, "xs": None}
    with pytest.raises(c.ConstructError):
        NULLABLE.build({"s": None, "xs": []}, 0)
    with pytest.raises(c.ConstructError):
        NULLABLE.parse(b"\xff\xff\x00\x00\x00\x00", 0)


def test_classic_and_compact_encodings():
    message = Message("M", "0-1", "1+", [Field("s", STRING), Field("xs", Array(INT16))])
    values = {"s": "ab", "xs": [7]}
    assert message.build(values, 0) == b"\x00\x02ab" + b"\x00\x00\x00\x01\x00\x07"
    # Compact: uvarint length + 1, uvarint count + 1, then an empty tagged-field section.
    assert message.build(values, 1) == b"\x03ab" + b"\x02\x00\x07" + b"\x00"
    assert message.parse(message.build(values, 1), 1) == values


def test_long_compact_string_uses_a_multibyte_varint():
    message = Message("M", "0", "0+", [Field("s", STRING)])
    data = message.build({"s": "x" * 200}, 0)
    assert data[:2] == encode_uvarint(201) == b"\xc9\x01"
    assert message.parse(data, 0) == {"s": "x" * 200}


TAGGED = Message(
    "T",
    "0-1",
    "1+",
    [
        Field("a", INT16),
        Field("note", STRING, "1+", nullable="1+", tag=3, tagged="1+"),
        Field("epoch", INT64, "1+", tag=1, tagged="1+", default=-1),
        Field("leader", [Field("id", INT32), Field("epoch", INT32, default=-1)], "1+", tag=2, tagged="1+"),
    ],
)


def test_tagged_fields_absent_take_their_defaults():
    assert TAGGED.build({"a": 5}, 1) == b"\x00\x05\x00"
    assert TAGGED.parse(b"\x00\x05\x00", 1) == {"a": 5, "note": None, "epoch": -1, "leader": None}


def test_tagged_fields_are_written_in_tag_order_and_read_back():
    values = {"a": 5, "note": "hi", "epoch": 9, "leader": {"id": 4, "epoch": 2}}
    data = TAGGED.build(values, 1)
    assert data[:3] == b"\x00\x05\x03"  # three tags present
    tags = []
    pos = 3
    for _ in range(3):
        tag, size = data[pos], data[pos + 1]
        tags.append(tag)
        pos += 2 + size
    assert tags == [1, 2, 3] and pos == len(data)
    assert TAGGED.parse(data, 1) == values


def test_unknown_tags_are_skipped():
    known = b"\x03\x03\x03hi"  # tag 3, 3 bytes: compact string "hi"
    unknown = b"\x07\x04\xde\xad\xbe\xef"  # tag 7, 4 bytes nobody declared
    data = b"\x00\x05" + b"\x02" + known + unknown
    assert TAGGED.parse(data, 1) == {"a": 5, "note": "hi", "epoch": -1, "leader": None}


def test_build_fills_defaults():
    message = Message(
        "D",
        "0",
        "none",
        [Field("n", INT32), Field("s", STRING), Field("xs", Array(INT32)), Field("e", INT64, default=-1),
         Field("maybe", STRING, nullable="0+")],
    )
    assert message.parse(message.build({}, 0), 0) == {"n": 0, "s": "", "xs": [], "e": -1, "maybe": None}


@pytest.mark.parametrize("api", sorted(APIS.values(), key=lambda a: a.key), ids=lambda a: a.name)
def test_truncated_input_raises_construct_errors(api):
    version = api.response.version_range.hi
    data = api.response.build(sample(api.response, version, nulls=False), version)
    for cut in range(len(data)):
        with pytest.raises(c.ConstructError):
            api.response.parse(data[:cut], version)


def test_api_versions_still_round_trips_with_tagged_features():
    body = {
        "error_code": 0,
        "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 3}],
        "throttle_time_ms": 0,
        "supported_features": [{"name": "f", "min_version": 0, "max_version": 1}],
        "finalized_features_epoch": 3,
        "finalized_features": [],
    }
    assert API_VERSIONS.response.parse(API_VERSIONS.response.build(body, 3), 3) == body
    assert API_VERSIONS.response.parse(API_VERSIONS.response.build(body, 0), 0) == {
        "error_code": 0,
        "api_keys": body["api_keys"],
        # absent in v0: their declared defaults
        "throttle_time_ms": 0, "supported_features": [], "finalized_features_epoch": -1, "finalized_features": [],
    }


def test_truncated_request_frame_is_malformed_not_a_crash():
    metadata = APIS[3]
    body = sample(metadata.request, 12, nulls=False)
    frame = encode_request(metadata, 12, 1, "client", body)[4:]
    header = peek_header(frame)
    assert on_the_wire(metadata.request.fields, decode_request(frame, header, metadata), 12) == body
    for cut in range(len(frame) - len(metadata.request.build(body, 12)), len(frame)):
        with pytest.raises(MalformedRequest):
            decode_request(frame[:cut], header, metadata)
