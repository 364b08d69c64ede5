"""The Protobuf embedded format: a registered PROTOBUF schema as a message class, JSON to and
from its messages (protobuf's own json_format), and Confluent's framing of the message indexes.

A schema is registered either as .proto text (parsed by the registry with proto-schema-parser,
turned here into a FileDescriptorProto) or as a base64 FileDescriptorProto, as confluent-kafka's
ProtobufSerializer registers it. Imports of Google's well-known types and of other registered
schemas (the schema's references) are resolved. The message written is the file's first, as
Confluent's serializers choose by default (message indexes [0], framed as the single byte 0).
"""

from __future__ import annotations

from trafka.restproxy import errors
from trafka.wire.types import encode_uvarint, uvarint_at

_WELL_KNOWN = {f"google/protobuf/{name}.proto": f"google.protobuf.{name}_pb2"
               for name in ("any", "duration", "empty", "field_mask", "struct", "timestamp", "wrappers",
                            "source_context", "type", "api", "descriptor")}
_SCALARS = {"double": 1, "float": 2, "int64": 3, "uint64": 4, "int32": 5, "fixed64": 6, "fixed32": 7, "bool": 8,
            "string": 9, "bytes": 12, "uint32": 13, "sfixed32": 15, "sfixed64": 16, "sint32": 17, "sint64": 18}
OPTIONAL, REPEATED = 1, 3


class Message:
    """A registered schema's message classes, by message-index path."""

    def __init__(self, pool, proto):
        self.pool, self.proto = pool, proto

    def by_indexes(self, indexes: list[int]):
        from google.protobuf import message_factory

        try:
            found = self.proto.message_type[indexes[0]]
            names = [found.name]
            for index in indexes[1:]:
                found = found.nested_type[index]
                names.append(found.name)
        except IndexError:
            raise errors.kafka_error(f"Message indexes {indexes} name no message of the schema") from None
        full_name = ".".join(([self.proto.package] if self.proto.package else []) + names)
        return message_factory.GetMessageClass(self.pool.FindMessageTypeByName(full_name))


def load(reg, rec) -> Message:
    """The message classes of registered PROTOBUF schema `rec` (and what it imports)."""
    from google.protobuf import descriptor_pool

    pool = descriptor_pool.DescriptorPool()
    return Message(pool, _add(pool, reg, rec, "schema.proto", set()))


def _add(pool, reg, rec, name: str, added: set):
    import importlib

    proto = file_proto(reg.parse(rec.schema_type, rec.schema, rec.references).schema, name)
    by_name = {ref.name: ref for ref in rec.references}
    for dependency in proto.dependency:
        if dependency in added:
            continue
        added.add(dependency)
        if dependency in _WELL_KNOWN:
            pool.AddSerializedFile(importlib.import_module(_WELL_KNOWN[dependency]).DESCRIPTOR.serialized_pb)
        elif dependency in by_name:
            ref = by_name[dependency]
            _add(pool, reg, reg.version(ref.subject, str(ref.version)), dependency, added)
        else:
            raise errors.invalid_schema(f"import {dependency} is neither a reference nor a well-known type")
    try:
        pool.Add(proto)
    except TypeError as exc:  # upb's answer to names it cannot resolve
        raise errors.invalid_schema(str(exc)) from None
    return proto


def file_proto(parsed, name: str):
    """A FileDescriptorProto from what the registry parsed: one already, or a .proto's AST."""
    from google.protobuf import descriptor_pb2
    from proto_schema_parser import ast

    if isinstance(parsed, descriptor_pb2.FileDescriptorProto):
        out = descriptor_pb2.FileDescriptorProto()
        out.CopyFrom(parsed)
        out.name = out.name or name
        return out
    out = descriptor_pb2.FileDescriptorProto(name=name, syntax=parsed.syntax or "proto2")
    for element in parsed.file_elements:
        if isinstance(element, ast.Package):
            out.package = element.name
        elif isinstance(element, ast.Import):
            out.dependency.append(element.name)
        elif isinstance(element, ast.Message):
            _message(out.message_type.add(), element)
        elif isinstance(element, ast.Enum):
            _enum(out.enum_type.add(), element)
    return out


def _message(out, message) -> None:
    from proto_schema_parser import ast

    out.name = message.name
    for element in message.elements:
        if isinstance(element, ast.Field):
            _field(out.field.add(), element)
        elif isinstance(element, ast.MapField):
            entry = out.nested_type.add(name="".join(p.capitalize() for p in element.name.split("_")) + "Entry")
            entry.options.map_entry = True
            _typed(entry.field.add(name="key", number=1, label=OPTIONAL), element.key_type)
            _typed(entry.field.add(name="value", number=2, label=OPTIONAL), element.value_type)
            out.field.add(name=element.name, number=element.number, label=REPEATED, type_name=entry.name)
        elif isinstance(element, ast.OneOf):
            out.oneof_decl.add(name=element.name)
            for inner in element.elements:
                if isinstance(inner, ast.Field):
                    field = out.field.add()
                    _field(field, inner)
                    field.oneof_index = len(out.oneof_decl) - 1
        elif isinstance(element, ast.Message):
            _message(out.nested_type.add(), element)
        elif isinstance(element, ast.Enum):
            _enum(out.enum_type.add(), element)


def _field(out, field) -> None:
    out.name, out.number = field.name, field.number
    out.label = REPEATED if field.cardinality is not None and field.cardinality.name == "REPEATED" else OPTIONAL
    _typed(out, field.type)


def _typed(out, type_name: str) -> None:
    if type_name in _SCALARS:
        out.type = _SCALARS[type_name]
    else:  # a message or enum: the pool resolves the name in its scope, as protoc does
        out.type_name = type_name


def _enum(out, enum) -> None:
    from proto_schema_parser import ast

    out.name = enum.name
    for element in enum.elements:
        if isinstance(element, ast.EnumValue):
            out.value.add(name=element.name, number=element.number)


# --- Confluent's framing of the message indexes ---------------------------------------------

def _zigzag(n: int) -> bytes:
    return encode_uvarint((n << 1) ^ (n >> 63))  # the wire's one varint encoder, zigzagged


def _read_zigzag(data: bytes, pos: int) -> tuple[int, int]:
    value, pos = uvarint_at(data, pos)  # the wire's one varint decoder
    return (value >> 1) ^ -(value & 1), pos


def frame_indexes(indexes: list[int]) -> bytes:
    if indexes == [0]:
        return b"\0"
    return _zigzag(len(indexes)) + b"".join(_zigzag(i) for i in indexes)


def read_indexes(payload: bytes) -> tuple[list[int], int]:
    """The message indexes at the start of a payload, and where the message begins."""
    count, pos = _read_zigzag(payload, 0)
    if count == 0:
        return [0], pos
    indexes = []
    for _ in range(count):
        index, pos = _read_zigzag(payload, pos)
        indexes.append(index)
    return indexes, pos


def encode(message: Message, data) -> bytes:
    from google.protobuf import json_format

    cls = message.by_indexes([0])
    try:
        return frame_indexes([0]) + json_format.ParseDict(data, cls()).SerializeToString()
    except (json_format.ParseError, TypeError, ValueError) as exc:
        raise errors.RestError(422, 42203, f"Conversion of JSON to Protobuf failed: {exc}") from None


def decode(message: Message, payload: bytes):
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError

    try:
        indexes, pos = read_indexes(payload)
        value = message.by_indexes(indexes).FromString(payload[pos:])
    except (DecodeError, IndexError) as exc:
        raise errors.kafka_error(f"Record is not a message of its Protobuf schema: {exc}") from None
    return json_format.MessageToDict(value, preserving_proto_field_name=True)
