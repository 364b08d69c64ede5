"""Our message declarations against kafka-python 3.0.12's protocol classes.

For every served (API, version): a request kafka-python encodes decodes in our codec to the
same field values, and a response we encode decodes in kafka-python to the same values. Each
runs twice: once with every field filled in, once with every nullable field null (and tagged
fields left at their defaults).

kafka-python builds its classes from Kafka's own message schemas, so the comparison walks its
schema (`cls._struct`) and our decoded containers side by side: same field names, same order of
untagged fields, same values, and nothing extra on either side.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import kafka.protocol
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.schemas.fields.codecs import BitField, Bytes

from trafka.wire.framing import decode_request, encode_response, peek_header
from trafka.wire.messages import APIS
from trafka.wire.schema import Array, Field
from testkit.wire_samples import on_the_wire, sample

# The brief's table: the versions each API is served (Produce v0-2 are declared but answered
# with UNSUPPORTED_VERSION, so they are not served) and Kafka's first flexible version.
SERVED = {
    "Metadata": (3, range(0, 14), 9),
    "Produce": (0, range(3, 14), 9),
    "Fetch": (1, range(4, 19), 12),
    "ListOffsets": (2, range(1, 12), 6),
    "FindCoordinator": (10, range(0, 7), 3),
    "OffsetCommit": (8, range(2, 11), 8),
    "OffsetFetch": (9, range(1, 11), 6),
    "JoinGroup": (11, range(0, 10), 6),
    "Heartbeat": (12, range(0, 5), 4),
    "LeaveGroup": (13, range(0, 6), 4),
    "SyncGroup": (14, range(0, 6), 4),
    "DescribeGroups": (15, range(0, 7), 5),
    "ListGroups": (16, range(0, 6), 3),
    "CreateTopics": (19, range(2, 8), 5),
    "DeleteTopics": (20, range(1, 7), 4),
    "DeleteRecords": (21, range(0, 3), 2),
    "InitProducerId": (22, range(0, 6), 2),
    "AddPartitionsToTxn": (24, range(0, 6), 3),
    "EndTxn": (26, range(0, 6), 3),
    "TxnOffsetCommit": (28, range(0, 6), 3),
    "DescribeConfigs": (32, range(1, 5), 4),
    "AlterConfigs": (33, range(0, 3), 2),
    "CreatePartitions": (37, range(0, 4), 2),
    "DeleteGroups": (42, range(0, 3), 2),
    "IncrementalAlterConfigs": (44, range(0, 2), 1),
    "OffsetDelete": (47, range(0, 1), None),
    "OffsetForLeaderEpoch": (23, range(2, 5), 4),
    "DescribeClientQuotas": (48, range(0, 2), 1),
    "AlterClientQuotas": (49, range(0, 2), 1),
    "UpdateFeatures": (57, range(0, 3), 0),
    "ListConfigResources": (74, range(0, 2), 0),
}
DECLARED_BEYOND_SERVED = {"Produce": range(0, 14), "InitProducerId": range(0, 7)}

CASES = [
    pytest.param(key, version, nulls, id=f"{name}-v{version}-{'nulls' if nulls else 'values'}")
    for name, (key, versions, _) in SERVED.items()
    for version in versions
    for nulls in (False, True)
]


# -- kafka-python's classes, found by API key -------------------------------------------------


def _kafka_python_classes() -> dict[int, dict[str, type]]:
    for info in pkgutil.walk_packages(kafka.protocol.__path__, "kafka.protocol."):
        if ".old" not in info.name and "generate_stubs" not in info.name:
            importlib.import_module(info.name)
    found: dict[int, dict[str, type]] = {}
    todo = list(ApiMessage.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls._class_version is None:
            found.setdefault(cls.API_KEY, {})[cls.type] = cls
    return found


KAFKA_PYTHON = _kafka_python_classes()


def kafka_python_class(key: int, kind: str, version: int) -> type:
    cls = KAFKA_PYTHON.get(key, {}).get(kind)
    if cls is None:
        pytest.skip(f"kafka-python 3.0.12 has no {kind} class for API key {key}")
    lo, hi = cls.valid_versions
    if not lo <= version <= hi:
        pytest.skip(f"kafka-python 3.0.12 declares {cls.__name__} only for v{lo}-{hi}")
    return cls


# -- walking kafka-python's schema next to our values ------------------------------------------


def kp_fields(kp_struct, version):
    return [f for f in kp_struct.fields.values() if f.for_version_q(version)]


def our_key(kp_name: str, ours: dict, path: str) -> str:
    if kp_name in ours:
        return kp_name
    # kafka-python renames Metadata's cluster/topic authorized operations to one name.
    if kp_name == "authorized_operations":
        matches = [k for k in ours if k.endswith("_authorized_operations")]
        if len(matches) == 1:
            return matches[0]
    raise AssertionError(f"{path}: kafka-python has field {kp_name!r}, ours has {sorted(ours)}")


def kp_to_ours(kp_field, value):
    """A kafka-python primitive value in our representation."""
    if kp_field._type is BitField:
        if value is None:
            return -(2**31)
        bits = BitField.to_32_bit_field(value)
        return bits - 2**32 if bits >= 2**31 else bits
    if kp_field._type is Bytes and value is not None:
        return bytes(value)
    return value


def ours_to_kp(kp_field, value):
    if kp_field._type is BitField:
        return None if value == -(2**31) else BitField.from_32_bit_field(value & 0xFFFFFFFF)
    return value


def to_kafka_python(kp_struct, ours: dict, version: int, path: str, make=None):
    """Our sample values as a kafka-python data object of the same shape."""
    kwargs = {}
    for f in kp_fields(kp_struct, version):
        key = our_key(f.name, ours, path)
        value, sub = ours[key], f"{path}.{key}"
        if value is None:
            kwargs[f.name] = None
        elif f.is_struct():
            kwargs[f.name] = to_kafka_python(f, value, version, sub)
        elif f.is_struct_array():
            kwargs[f.name] = [to_kafka_python(f, v, version, f"{sub}[{i}]") for i, v in enumerate(value)]
        elif f.is_array():
            kwargs[f.name] = [ours_to_kp(f.array_of, v) for v in value]
        else:
            kwargs[f.name] = ours_to_kp(f, value)
    assert len(kwargs) == len(ours), f"{path}: we have fields kafka-python lacks: {set(ours) - set(kwargs)}"
    return (make or kp_struct.data_class)(**kwargs)


def assert_same(kp_struct, kp_obj, ours: dict, version: int, path: str):
    """kafka-python's object and our container hold the same fields, in order, with equal values."""
    fields = kp_fields(kp_struct, version)
    keys = [our_key(f.name, ours, path) for f in fields]
    assert sorted(keys) == sorted(ours), f"{path}: fields differ: ours {sorted(ours)}, kafka-python {sorted(keys)}"
    untagged = [k for f, k in zip(fields, keys) if not f.tagged_field_q(version)]
    assert untagged == [k for k in ours if k in untagged], f"{path}: field order differs"
    for f, key in zip(fields, keys):
        theirs, mine, sub = getattr(kp_obj, f.name), ours[key], f"{path}.{key}"
        if theirs is None or mine is None:
            if f.is_struct() or f.is_array():
                assert theirs == mine, sub
            else:
                assert kp_to_ours(f, theirs) == mine, sub
            continue
        if f.is_struct():
            assert_same(f, theirs, mine, version, sub)
        elif f.is_struct_array():
            assert len(theirs) == len(mine), sub
            for i, (t, m) in enumerate(zip(theirs, mine)):
                assert_same(f, t, m, version, f"{sub}[{i}]")
        elif f.is_array():
            assert [kp_to_ours(f.array_of, v) for v in theirs] == list(mine), sub
        else:
            assert kp_to_ours(f, theirs) == mine, f"{sub}: kafka-python {theirs!r}, ours {mine!r}"


def assert_same_shape(kp_struct, fields: list[Field], version: int, flexible: bool, path: str):
    """Same fields in the same order, with the same types, nullability and tags."""
    ours = {f.name: f for f in fields if f.present_in(version)}
    theirs = kp_fields(kp_struct, version)
    keys = [our_key(kf.name, ours, path) for kf in theirs]
    assert sorted(keys) == sorted(ours), f"{path}: fields differ: ours {sorted(ours)}, kafka-python {sorted(keys)}"
    for kf, key in zip(theirs, keys):
        f, sub = ours[key], f"{path}.{key}"
        assert f.is_nullable_in(version) == kf.nullable_for_version_q(version), f"{sub}: nullability differs"
        tagged = flexible and kf.tagged_field_q(version)
        assert f.is_tagged_in(version, flexible) == tagged, f"{sub}: taggedness differs"
        if tagged:
            assert f.tag == kf.tag, f"{sub}: tag {f.tag}, kafka-python {kf.tag}"
        if kf.is_struct_array():
            assert isinstance(f.type, Array) and isinstance(f.type.item, list), f"{sub}: not an array of structs"
            assert_same_shape(kf, f.type.item, version, flexible, sub)
        elif kf.is_struct():
            assert isinstance(f.type, list), f"{sub}: not a struct"
            assert_same_shape(kf, f.type, version, flexible, sub)
        elif kf.is_array():
            assert isinstance(f.type, Array) and f.type.item.name == kf.array_of.type_str, f"{sub}: {f.type}"
        else:
            # kafka-python reads authorized-operations int32s as bit sets.
            expected = "int32" if kf.type_str == "bitfield" else kf.type_str
            assert f.type.name == expected, f"{sub}: {f.type}, kafka-python {kf.type_str}"


# -- the tests ---------------------------------------------------------------------------------


def test_declared_bands_and_flexible_versions():
    for name, (key, versions, first_flexible) in SERVED.items():
        api = APIS[key]
        assert api.name == name
        declared = DECLARED_BEYOND_SERVED.get(name, versions)
        for message in (api.request, api.response):
            band = message.version_range
            assert range(band.lo, band.hi + 1) == declared, f"{message.name} declares {band}"
            for v in declared:
                assert message.is_flexible(v) == (first_flexible is not None and v >= first_flexible)


@pytest.mark.parametrize(
    "key,version",
    [pytest.param(key, v, id=f"{name}-v{v}") for name, (key, versions, _) in SERVED.items() for v in versions],
)
def test_schema_shape_matches_kafka_python(key, version):
    api = APIS[key]
    for kind, message in (("request", api.request), ("response", api.response)):
        kp_cls = kafka_python_class(key, kind, version)
        assert message.is_flexible(version) == kp_cls.flexible_version_q(version), f"{message.name} flexible"
        assert_same_shape(kp_cls._struct, message.fields, version, message.is_flexible(version), message.name)


@pytest.mark.parametrize("key,version,nulls", CASES)
def test_request_from_kafka_python_decodes_the_same(key, version, nulls):
    api = APIS[key]
    kp_cls = kafka_python_class(key, "request", version)
    values = sample(api.request, version, nulls)
    kp_request = to_kafka_python(kp_cls._struct, values, version, api.request.name,
                                 make=lambda **kw: kp_cls(version=version, **kw))
    kp_request.with_header(correlation_id=4242, client_id="kafka-python-test")
    frame = kp_request.encode(header=True, framed=True)[4:]

    header = peek_header(frame)
    assert (header.api_key, header.api_version, header.correlation_id) == (key, version, 4242)
    assert header.client_id == "kafka-python-test"
    ours = on_the_wire(api.request.fields, decode_request(frame, header, api), version)
    assert_same(kp_cls._struct, kp_request, ours, version, api.request.name)


@pytest.mark.parametrize("key,version,nulls", CASES)
def test_response_we_encode_decodes_the_same_in_kafka_python(key, version, nulls):
    api = APIS[key]
    kp_cls = kafka_python_class(key, "response", version)
    values = sample(api.response, version, nulls)
    frame = b"".join(encode_response(api, version, 777, values))

    kp_response = kp_cls.decode(frame, version=version, header=True, framed=True)
    assert kp_response.header.correlation_id == 777
    assert_same(kp_cls._struct, kp_response, values, version, api.response.name)


ALL_DECLARED = [
    pytest.param(api, version, nulls, id=f"{api.name}-v{version}-{'nulls' if nulls else 'values'}")
    for api in sorted(APIS.values(), key=lambda a: a.key)
    for version in range(api.request.version_range.lo, api.request.version_range.hi + 1)
    for nulls in (False, True)
]


@pytest.mark.parametrize("api,version,nulls", ALL_DECLARED)
def test_our_round_trip(api, version, nulls):
    """Every declared version, including those kafka-python cannot check, survives encode/decode."""
    for message in (api.request, api.response):
        values = sample(message, version, nulls)
        data = message.build(values, version)
        assert on_the_wire(message.fields, message.parse(data, version), version) == values
        assert message.build(message.parse(data, version), version) == data
