"""Compatibility of JSON Schema and Protobuf schemas: Confluent's documented rules, checked on
what the parsers give (jsonschema's validated schema objects; proto-schema-parser's AST or a
FileDescriptorProto). Avro's compatibility is Apache Avro's own checker (kinds.py).

`json_incompatibilities(reader, writer)` and `protobuf_incompatibilities(reader, writer)` list
why data written with `writer` cannot be read with `reader`, in the registry's message shape
"{errorType:'...', description:'...', location:'...'}" (empty: it can).
"""

from __future__ import annotations

from dataclasses import dataclass

# --- JSON Schema -------------------------------------------------------------------------------

_TIGHTER_WHEN_SMALLER = ("maxLength", "maxItems", "maxProperties", "maximum", "exclusiveMaximum")
_TIGHTER_WHEN_LARGER = ("minLength", "minItems", "minProperties", "minimum", "exclusiveMinimum")


def _issue(kind: str, description: str, location: str) -> str:
    return f"{{errorType:'{kind}', description:'{description}', location:'{location or '#/'}'}}"


def _types(schema) -> set[str] | None:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind is None:
        return None
    return {kind} if isinstance(kind, str) else set(kind)


def json_incompatibilities(reader, writer, location: str = "#") -> list[str]:
    """Every value `writer` accepts must be one `reader` accepts."""
    if reader is True or reader == {}:
        return []
    if writer is False:
        return []
    if reader is False:
        return [_issue("SCHEMA_REMOVED", "the new schema accepts nothing", location)]
    if writer is True or writer == {}:
        return [_issue("TYPE_NARROWED", "the old schema accepted any value", location)]
    problems: list[str] = []
    rtypes, wtypes = _types(reader), _types(writer)
    if rtypes is not None:
        widened = set(rtypes) | ({"integer"} if "number" in rtypes else set())
        if wtypes is None or not wtypes <= widened:
            problems.append(_issue("TYPE_CHANGED", f"type {sorted(wtypes or ['any'])} is not within {sorted(rtypes)}",
                                   location))
            return problems
    if "enum" in reader:
        missing = [v for v in writer.get("enum", [None]) if v not in reader["enum"]] if "enum" in writer else ["any"]
        if missing:
            problems.append(_issue("ENUM_ARRAY_NARROWED", f"values {missing} are no longer allowed", location + "/enum"))
    if "const" in reader and writer.get("const", object()) != reader["const"]:
        problems.append(_issue("CONST_CHANGED", "the const value changed", location + "/const"))
    for key in _TIGHTER_WHEN_SMALLER:
        if key in reader and (key not in writer or reader[key] < writer[key]):
            problems.append(_issue(f"{key.upper()}_DECREASED" if key in writer else f"{key.upper()}_ADDED",
                                   f"{key} is stricter", f"{location}/{key}"))
    for key in _TIGHTER_WHEN_LARGER:
        if key in reader and (key not in writer or reader[key] > writer[key]):
            problems.append(_issue(f"{key.upper()}_INCREASED" if key in writer else f"{key.upper()}_ADDED",
                                   f"{key} is stricter", f"{location}/{key}"))
    if "pattern" in reader and reader["pattern"] != writer.get("pattern"):
        problems.append(_issue("PATTERN_CHANGED", "the pattern changed", location + "/pattern"))
    problems += _json_object(reader, writer, location)
    if isinstance(reader.get("items"), (dict, bool)) and "items" in reader:
        problems += json_incompatibilities(reader["items"], writer.get("items", True), location + "/items")
    return problems


def _json_object(reader: dict, writer: dict, location: str) -> list[str]:
    problems = []
    rprops, wprops = reader.get("properties", {}), writer.get("properties", {})
    newly_required = set(reader.get("required", [])) - set(writer.get("required", []))
    for name in sorted(newly_required):
        problems.append(_issue("REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL" if name not in wprops
                               else "REQUIRED_ATTRIBUTE_ADDED", f"property {name} is now required",
                               f"{location}/required"))
    closed = reader.get("additionalProperties") is False
    if closed and writer.get("additionalProperties", True) is not False:
        problems.append(_issue("ADDITIONAL_PROPERTIES_REMOVED", "the content model was closed",
                               f"{location}/additionalProperties"))
    for name, wschema in sorted(wprops.items()):
        if name in rprops:
            problems += json_incompatibilities(rprops[name], wschema, f"{location}/properties/{name}")
        elif closed:
            problems.append(_issue("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", f"property {name} was removed",
                                   f"{location}/properties/{name}"))
        elif isinstance(reader.get("additionalProperties"), dict):
            problems += json_incompatibilities(reader["additionalProperties"], wschema, f"{location}/properties/{name}")
    return problems


# --- Protobuf ----------------------------------------------------------------------------------

# Scalar types that read each other's wire values (Confluent's compatible changes).
_SAME_WIRE = [{"int32", "uint32", "int64", "uint64", "bool", "enum"}, {"sint32", "sint64"}, {"string", "bytes"},
              {"fixed32", "sfixed32"}, {"fixed64", "sfixed64"}]
_SCALARS = {"double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64",
            "sfixed32", "sfixed64", "bool", "string", "bytes"}
_DESCRIPTOR_TYPES = {1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32",
                     8: "bool", 9: "string", 12: "bytes", 13: "uint32", 15: "sfixed32", 16: "sfixed64", 17: "sint32",
                     18: "sint64", 14: "enum"}


@dataclass(frozen=True)
class _Field:
    name: str
    kind: str  # a scalar type name, "enum", or the message's short name
    cardinality: str  # single, repeated, map


@dataclass
class _Model:
    package: str
    messages: dict[str, dict[int, _Field]]


def _from_ast(parsed) -> _Model:
    from proto_schema_parser import ast

    package = next((e.name for e in parsed.file_elements if isinstance(e, ast.Package)), "")
    enums = set()
    messages: dict[str, dict[int, _Field]] = {}

    def collect_enums(elements, prefix):
        for e in elements:
            if isinstance(e, ast.Enum):
                enums.add(e.name)
            elif isinstance(e, ast.Message):
                collect_enums(e.elements, prefix + e.name + ".")

    def walk(elements, prefix):
        for e in elements:
            if isinstance(e, ast.Message):
                fields: dict[int, _Field] = {}
                for item in e.elements:
                    for f in (item.elements if isinstance(item, ast.OneOf) else [item]):
                        if isinstance(f, ast.Field):
                            kind = f.type if f.type in _SCALARS else ("enum" if f.type.split(".")[-1] in enums
                                                                      else f.type.split(".")[-1])
                            repeated = getattr(f.cardinality, "value", None) == "REPEATED"
                            fields[f.number] = _Field(f.name, kind, "repeated" if repeated else "single")
                        elif isinstance(f, ast.MapField):
                            fields[f.number] = _Field(f.name, f"map<{f.key_type},{f.value_type}>", "map")
                messages[prefix + e.name] = fields
                walk(e.elements, prefix + e.name + ".")

    collect_enums(parsed.file_elements, "")
    walk(parsed.file_elements, "")
    return _Model(package, messages)


def _from_descriptor(descriptor) -> _Model:
    messages: dict[str, dict[int, _Field]] = {}

    def walk(types, prefix):
        for message in types:
            maps = {n.name for n in message.nested_type if n.options.map_entry}
            fields = {}
            for f in message.field:
                short = f.type_name.split(".")[-1]
                if f.label == 3 and short in maps:
                    entry = next(n for n in message.nested_type if n.name == short)
                    key, value = entry.field[0], entry.field[1]
                    fields[f.number] = _Field(f.name, f"map<{_descriptor_kind(key)},{_descriptor_kind(value)}>", "map")
                else:
                    fields[f.number] = _Field(f.name, _descriptor_kind(f), "repeated" if f.label == 3 else "single")
            messages[prefix + message.name] = fields
            walk([n for n in message.nested_type if not n.options.map_entry], prefix + message.name + ".")

    walk(descriptor.message_type, "")
    return _Model(descriptor.package, messages)


def _descriptor_kind(field) -> str:
    if field.type in _DESCRIPTOR_TYPES:
        return _DESCRIPTOR_TYPES[field.type]
    return field.type_name.split(".")[-1]  # a message


def _model(parsed) -> _Model:
    return _from_ast(parsed) if hasattr(parsed, "file_elements") else _from_descriptor(parsed)


def _compatible_kinds(a: str, b: str) -> bool:
    return a == b or any(a in group and b in group for group in _SAME_WIRE)


def protobuf_incompatibilities(reader, writer) -> list[str]:
    """Confluent's Protobuf rules, both directions alike: the package and every message stay, and a
    field number keeps a type of the same wire encoding and its cardinality; fields may be added,
    removed or renamed."""
    new, old = _model(reader), _model(writer)
    problems = []
    if new.package != old.package:
        problems.append(_issue("PACKAGE_CHANGED", f"package {old.package!r} became {new.package!r}", "#/"))
    for name, fields in sorted(old.messages.items()):
        if name not in new.messages:
            problems.append(_issue("MESSAGE_REMOVED", f"message {name} was removed", f"#/{name}"))
            continue
        for number, field in sorted(fields.items()):
            now = new.messages[name].get(number)
            if now is None:
                continue
            if now.cardinality != field.cardinality:
                problems.append(_issue("FIELD_KIND_CHANGED", f"field {number} went from {field.cardinality} to "
                                       f"{now.cardinality}", f"#/{name}/{number}"))
            elif not _compatible_kinds(now.kind, field.kind):
                problems.append(_issue("FIELD_SCALAR_KIND_CHANGED" if field.kind in _SCALARS else "FIELD_NAMED_TYPE_CHANGED",
                                       f"field {number} changed type from {field.kind} to {now.kind}",
                                       f"#/{name}/{number}"))
    return problems
