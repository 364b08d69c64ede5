"""The records of `_schemas`, in Confluent Schema Registry's own shapes: JSON keys and values.

    SCHEMA          {"keytype":"SCHEMA","subject":s,"version":v,"magic":1}
                    -> {"subject":s,"version":v,"id":n,"schemaType":"JSON"|"PROTOBUF" (absent for
                       AVRO),"schema":text,"references":[{"name","subject","version"}],"deleted":bool}
                    a tombstone is a permanent (hard) delete of that version
    CONFIG          {"keytype":"CONFIG","subject":s|null,"magic":0} -> {"compatibilityLevel":level}
    MODE            {"keytype":"MODE","subject":s|null,"magic":0} -> {"mode":mode}
    DELETE_SUBJECT  {"keytype":"DELETE_SUBJECT","subject":s,"magic":0} -> {"subject":s,"version":v}
    NOOP            {"keytype":"NOOP","magic":0}

A CONFIG or MODE tombstone removes the subject's (or the global) setting. Keys are written with
their fields in this order, so a compacted topic keeps one record per key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from trafka.broker.coordinators.runtime.records import UnknownRecord


@dataclass(frozen=True)
class Reference:
    name: str
    subject: str
    version: int

    def to_json(self) -> dict:
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass(frozen=True)
class SchemaRecord:
    subject: str
    version: int
    id: int
    schema_type: str
    schema: str
    references: tuple[Reference, ...] = ()
    deleted: bool = False


def _dump(fields: dict) -> bytes:
    return json.dumps(fields, separators=(",", ":")).encode()


def schema_key(subject: str, version: int) -> bytes:
    return _dump({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1})


def schema_value(record: SchemaRecord) -> bytes:
    value = {"subject": record.subject, "version": record.version, "id": record.id}
    if record.schema_type != "AVRO":
        value["schemaType"] = record.schema_type
    value["schema"] = record.schema
    if record.references:
        value["references"] = [r.to_json() for r in record.references]
    value["deleted"] = record.deleted
    return _dump(value)


def config_key(subject: str | None) -> bytes:
    return _dump({"keytype": "CONFIG", "subject": subject, "magic": 0})


def config_value(level: str) -> bytes:
    return _dump({"compatibilityLevel": level})


def mode_key(subject: str | None) -> bytes:
    return _dump({"keytype": "MODE", "subject": subject, "magic": 0})


def mode_value(mode: str) -> bytes:
    return _dump({"mode": mode})


def delete_subject_key(subject: str) -> bytes:
    return _dump({"keytype": "DELETE_SUBJECT", "subject": subject, "magic": 0})


def delete_subject_value(subject: str, version: int) -> bytes:
    return _dump({"subject": subject, "version": version})


def parse_key(data: bytes) -> dict:
    key = _load(data, "key")
    if key is None or "keytype" not in key:
        raise UnknownRecord(f"_schemas key without a keytype: {data[:80]!r}")
    return key


def parse_value(data: bytes | None) -> dict | None:
    return None if data is None else _load(data, "value")


def schema_record(value: dict) -> SchemaRecord:
    try:
        return SchemaRecord(
            subject=str(value["subject"]), version=int(value["version"]), id=int(value["id"]),
            schema_type=str(value.get("schemaType") or "AVRO"), schema=str(value["schema"]),
            references=tuple(Reference(str(r["name"]), str(r["subject"]), int(r["version"]))
                             for r in value.get("references") or ()),
            deleted=bool(value.get("deleted", False)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise UnknownRecord(f"_schemas SCHEMA value is not the registry's shape: {exc}") from None


def _load(data: bytes, what: str):
    try:
        loaded = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise UnknownRecord(f"_schemas {what} is not JSON: {exc}") from None
    if not isinstance(loaded, dict):
        raise UnknownRecord(f"_schemas {what} is not a JSON object")
    return loaded
