"""Schema types: AVRO, JSON and PROTOBUF, each parsed by its well-kept library (Apache `avro`,
`jsonschema`, `proto-schema-parser`, and protobuf's own descriptors for the base64
FileDescriptorProto form) and compared by a canonical text; Avro compatibility is
Apache Avro's own schema-resolution checker (ReaderWriterCompatibilityChecker); JSON Schema's
and Protobuf's are Confluent's documented rules over the parsed schemas (compat_rules.py).

`parse(kind, text, references)` raises InvalidSchema (the registry's 42201) with the library's
reason. `incompatibilities(kind, reader, writer)` lists why data written with `writer` cannot be
read with `reader` (empty: it can).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

TYPES = ("AVRO", "JSON", "PROTOBUF")


class InvalidSchema(Exception):
    """The text is not a schema of its type (42201)."""


@dataclass(frozen=True)
class Parsed:
    kind: str
    canonical: str  # compared to find the same schema again
    schema: object  # the library's object


def parse(kind: str, text: str, references: list[tuple[str, str]] = ()) -> Parsed:
    """`references` are (type, text) of the referenced schemas, dependencies first."""
    if kind == "AVRO":
        return _avro(text, references)
    if kind == "JSON":
        return _json_schema(text)
    if kind == "PROTOBUF":
        return _protobuf(text)
    raise InvalidSchema(f"unknown schema type {kind}")


def incompatibilities(kind: str, reader: Parsed, writer: Parsed) -> list[str]:
    from trafka.broker.schemas import compat_rules

    if kind == "JSON":
        return compat_rules.json_incompatibilities(reader.schema, writer.schema)
    if kind == "PROTOBUF":
        return compat_rules.protobuf_incompatibilities(reader.schema, writer.schema)
    from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

    result = ReaderWriterCompatibilityChecker().get_compatibility(reader.schema, writer.schema)
    if result.compatibility is SchemaCompatibilityType.compatible:
        return []
    found = [f"{{errorType:'{t.name}', description:'{m}', location:'{loc}'}}"
             for t, m, loc in zip(sorted(result.incompatibilities, key=str), sorted(result.messages),
                                   sorted(result.locations))]
    return found or ["the reader cannot read data written with the writer's schema"]


def _avro(text: str, references) -> Parsed:
    import avro.errors
    import avro.name
    import avro.schema

    try:
        names = avro.name.Names()
        for ref_kind, ref_text in references:
            if ref_kind == "AVRO":
                avro.schema.make_avsc_object(json.loads(ref_text), names)
        schema = avro.schema.make_avsc_object(json.loads(text), names)
    except (ValueError, avro.errors.AvroException) as exc:
        raise InvalidSchema(f"Invalid schema {_short(text)}: {exc}") from None
    return Parsed("AVRO", str(schema), schema)


def _json_schema(text: str) -> Parsed:
    import jsonschema

    try:
        schema = json.loads(text)
    except ValueError as exc:
        raise InvalidSchema(f"Invalid schema {_short(text)}: not JSON: {exc}") from None
    if not isinstance(schema, (dict, bool)):
        raise InvalidSchema(f"Invalid schema {_short(text)}: a JSON schema is an object or a boolean")
    try:
        jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise InvalidSchema(f"Invalid schema {_short(text)}: {exc.message}") from None
    return Parsed("JSON", json.dumps(schema, separators=(",", ":")), schema)


def _protobuf(text: str) -> Parsed:
    """A .proto file, or (as Confluent's registry also takes it, and confluent-kafka's
    ProtobufSerializer sends it) a base64 FileDescriptorProto."""
    from proto_schema_parser.parser import Parser

    descriptor = _file_descriptor(text)
    if descriptor is not None:
        return Parsed("PROTOBUF", descriptor.SerializeToString(deterministic=True).hex(), descriptor)
    try:
        parsed = Parser().parse(text)
    except Exception as exc:  # noqa: BLE001 - the parser raises whatever its grammar meets
        raise InvalidSchema(f"Invalid schema: not a .proto file: {exc}") from None
    return Parsed("PROTOBUF", "\n".join(line.strip() for line in text.strip().splitlines() if line.strip()), parsed)


def _file_descriptor(text: str):
    """The FileDescriptorProto that `text` is in base64, or None."""
    import base64
    import binascii

    from google.protobuf import descriptor_pb2, message

    stripped = text.strip()
    if not stripped or any(c.isspace() for c in stripped) or ";" in stripped:
        return None
    try:
        descriptor = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(stripped, validate=True))
    except (binascii.Error, ValueError, message.DecodeError):
        return None
    return descriptor if descriptor.name or descriptor.message_type else None


def _short(text: str) -> str:
    return text if len(text) <= 200 else text[:200] + "..."
