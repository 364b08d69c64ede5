"""Embedded formats: how a key or value in a request's JSON becomes a record's bytes, and back.

- binary: base64 in JSON, the bytes as they are in the record;
- json: any JSON value, stored as its UTF-8 text; string (v3 only): a string's UTF-8 bytes;
- avro, jsonschema: the value checked against (and, for Avro, encoded with) a schema of the
  built-in registry, stored in Confluent's wire format (magic byte 0, the schema id in four
  bytes, the payload), as KafkaAvroSerializer and KafkaJsonSchemaSerializer write it.
- protobuf: the value as protobuf's JSON mapping of the schema's first message, stored in
  Confluent's wire format with the message indexes (protobuf.py).

Avro in JSON is Avro's JSON encoding: a union's value wrapped in its branch's name
({"string": "x"}; null bare), bytes and fixed as strings of code points 0-255. Produce also
takes a union's value bare (the first branch it fits), as Confluent's does not.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
from dataclasses import dataclass

from trafka.restproxy import errors

V2_TYPES = {"binary", "json", "avro", "jsonschema", "protobuf"}
REGISTRY_KINDS = {"avro": "AVRO", "jsonschema": "JSON", "protobuf": "PROTOBUF"}  # format -> schema type
FORMATS_OF_KIND = {kind: fmt for fmt, kind in REGISTRY_KINDS.items()}


def embedded_format(content_type: str) -> str | None:
    """`application/vnd.kafka.<format>.v2+json` -> the format's name; None for anything else."""
    media = content_type.split(";")[0].strip().lower()
    if not (media.startswith("application/vnd.kafka.") and media.endswith(".v2+json")):
        return None
    fmt = media[len("application/vnd.kafka."):-len(".v2+json")]
    return fmt if fmt in V2_TYPES else None


@dataclass(frozen=True)
class Schema:
    """A registered schema chosen for a key or value: where it is registered and its parse."""
    id: int
    subject: str | None
    version: int | None
    fmt: str
    parsed: object


# --- the registry ------------------------------------------------------------------------------

def registry(broker):
    return broker.cluster.schema_registry()


def registry_call(broker, ask):
    """`ask(registry)`, once more when `_schemas`' leadership moved meanwhile; the registry's
    errors as REST errors with the registry's own status and code."""
    from trafka.broker.schemas.registry import UNKNOWN_LEADER, RegistryError

    for attempt in (0, 1):
        try:
            return ask(registry(broker))
        except RegistryError as exc:
            if exc.code == UNKNOWN_LEADER and attempt == 0:
                continue
            raise errors.RestError(exc.status, exc.code, exc.message) from None


_parsed: dict[tuple[int, str], object] = {}


def _parse(reg, rec) -> object:
    key = (rec.id, rec.schema)
    if key not in _parsed:
        if rec.schema_type == "PROTOBUF":
            from trafka.restproxy import protobuf

            _parsed[key] = protobuf.load(reg, rec)
        else:
            _parsed[key] = reg.parse(rec.schema_type, rec.schema, rec.references).schema
    return _parsed[key]


def by_id(broker, schema_id: int, subject: str | None = None) -> Schema:
    def ask(reg):
        rec = reg.schema(schema_id)
        usages = dict(reg.usages(schema_id))
        version = usages.get(subject) if subject else None
        return Schema(schema_id, subject, version, FORMATS_OF_KIND[rec.schema_type], _parse(reg, rec))
    return registry_call(broker, ask)


def by_version(broker, subject: str, version: str) -> Schema:
    def ask(reg):
        rec = reg.version(subject, version)
        return Schema(rec.id, subject, rec.version, FORMATS_OF_KIND[rec.schema_type], _parse(reg, rec))
    return registry_call(broker, ask)


def register(broker, subject: str, fmt: str, text: str) -> Schema:
    """Register `text` under `subject` (the same schema again: its id), as a serializer with
    auto.register.schemas does."""
    def ask(reg):
        schema_id = reg.register(subject, REGISTRY_KINDS[fmt], text, ())
        version = dict(reg.usages(schema_id)).get(subject)
        return Schema(schema_id, subject, version, fmt, _parse(reg, reg.schema(schema_id)))
    return registry_call(broker, ask)


def record_name(broker, kind: str, text: str, references=()) -> str:
    """The name RecordNameStrategy gives a schema: an Avro record's full name, a Protobuf file's
    first message (with its package), a JSON Schema's title."""
    def ask(reg):
        parsed = reg.parse(kind, text, tuple(references)).schema
        if kind == "AVRO":
            return getattr(parsed, "fullname", None)
        if kind == "PROTOBUF":
            from trafka.restproxy import protobuf

            proto = protobuf.file_proto(parsed, "schema.proto")
            return ".".join(filter(None, [proto.package, proto.message_type[0].name])) if proto.message_type else None
        return parsed.get("title") if isinstance(parsed, dict) else None
    name = registry_call(broker, ask)
    if not name:
        raise errors.RestError(400, 400, "The schema has no record name (an Avro record, a Protobuf message, a JSON "
                                         "Schema title) for the subject name strategy")
    return name


def schema_record(broker, schema_id: int):
    return registry_call(broker, lambda reg: reg.schema(schema_id))


# --- encoding --------------------------------------------------------------------------------

def binary(data) -> bytes | None:
    if data is None:
        return None
    if not isinstance(data, str):
        raise errors.unprocessable("Binary data must be a base64 string", 42201)
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise errors.unprocessable(f"Binary data is not valid base64: {data[:40]!r}", 42201) from None


def json_bytes(data) -> bytes | None:
    return None if data is None else json.dumps(data, separators=(",", ":")).encode()


def string(data) -> bytes | None:
    if data is None:
        return None
    if not isinstance(data, str):
        raise errors.bad_request("String data must be a JSON string")
    return data.encode()


def with_schema(schema: Schema, data) -> bytes | None:
    """Confluent's wire format: magic byte 0, the schema id, the payload."""
    if data is None:
        return None
    head = b"\0" + schema.id.to_bytes(4, "big")
    if schema.fmt == "avro":
        return head + _avro_encode(schema.parsed, data)
    if schema.fmt == "jsonschema":
        import jsonschema

        try:
            jsonschema.validators.validator_for(schema.parsed, default=jsonschema.Draft7Validator)(schema.parsed).validate(data)
        except jsonschema.ValidationError as exc:
            raise errors.RestError(422, 42203, f"Conversion of JSON to Object failed: {exc.message}") from None
        return head + json_bytes(data)
    from trafka.restproxy import protobuf

    return head + protobuf.encode(schema.parsed, data)


def _avro_encode(parsed, data) -> bytes:
    import avro.errors
    import avro.io

    out = io.BytesIO()
    try:
        datum = _from_json(parsed, data)
        avro.io.DatumWriter(parsed).write(datum, avro.io.BinaryEncoder(out))
    except (avro.errors.AvroException, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise errors.json_avro_conversion(str(exc).splitlines()[0][:300]) from None
    return out.getvalue()


def _from_json(schema, value):
    """Avro's JSON encoding (wrapped unions, bytes as code points) to what avro's writer takes."""
    kind = schema.type
    if kind == "union":
        if value is None:
            return None
        if isinstance(value, dict) and len(value) == 1:
            (name, inner), = value.items()
            for branch in schema.schemas:
                if name in (branch.type, getattr(branch, "fullname", None), getattr(branch, "name", None)):
                    return _from_json(branch, inner)
        for branch in schema.schemas:  # unwrapped: the first branch it fits
            try:
                converted = _from_json(branch, value)
            except (ValueError, TypeError, KeyError, AttributeError):
                continue
            import avro.io

            if avro.io.validate(branch, converted):
                return converted
        raise ValueError(f"{json.dumps(value)[:80]} fits no branch of the union")
    if kind == "record" or kind == "error":
        if not isinstance(value, dict):
            raise ValueError(f"expected an object for record {schema.fullname}")
        out = {}
        for field in schema.fields:
            if field.name in value:
                out[field.name] = _from_json(field.type, value[field.name])
            elif field.has_default:
                out[field.name] = _from_json(field.type, field.default)
            else:
                raise ValueError(f"field {field.name} of {schema.fullname} is missing")
        return out
    if kind == "array":
        if not isinstance(value, list):
            raise ValueError("expected an array")
        return [_from_json(schema.items, v) for v in value]
    if kind == "map":
        if not isinstance(value, dict):
            raise ValueError("expected an object for a map")
        return {k: _from_json(schema.values, v) for k, v in value.items()}
    if kind in ("bytes", "fixed") and isinstance(value, str):
        return value.encode("latin-1")
    if kind in ("float", "double") and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


# --- rendering (a v2 consumer's records) -----------------------------------------------------

def render(broker, fmt: str, data: bytes | None):
    """Stored bytes as the JSON value a v2 consumer of `fmt` returns (None stays None)."""
    if data is None:
        return None
    if fmt == "binary":
        return base64.b64encode(data).decode()
    if fmt == "json":
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError):
            raise errors.kafka_error("Record is not JSON; consume it with the binary format") from None
    if fmt in ("avro", "jsonschema", "protobuf"):
        if len(data) < 5 or data[0] != 0:
            raise errors.kafka_error("Record is not in the schema registry's wire format (magic byte 0, schema id)")
        schema = by_id(broker, int.from_bytes(data[1:5], "big"))
        if schema.fmt != fmt:
            raise errors.consumer_format_mismatch()
        if fmt == "jsonschema":
            return json.loads(data[5:])
        if fmt == "protobuf":
            from trafka.restproxy import protobuf

            return protobuf.decode(schema.parsed, data[5:])
        return _to_json(schema.parsed, _avro_decode(schema.parsed, data[5:]))
    raise errors.RestError(406, 40601, f"The {fmt} embedded format is not served")


def _avro_decode(parsed, payload: bytes):
    import avro.io

    return avro.io.DatumReader(parsed).read(avro.io.BinaryDecoder(io.BytesIO(payload)))


def _to_json(schema, value):
    """Avro's JSON encoding of a datum, as Confluent's consumers return it: a union's value
    wrapped in its branch's name (null bare), bytes and fixed as strings of code points 0-255."""
    import avro.io

    kind = schema.type
    if kind == "union":
        if value is None:
            return None
        for branch in schema.schemas:
            if branch.type != "null" and avro.io.validate(branch, value):
                return {getattr(branch, "fullname", None) or branch.type: _to_json(branch, value)}
        return value
    if kind in ("record", "error"):
        return {f.name: _to_json(f.type, value.get(f.name)) for f in schema.fields}
    if kind == "array":
        return [_to_json(schema.items, v) for v in value]
    if kind == "map":
        return {k: _to_json(schema.values, v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value
