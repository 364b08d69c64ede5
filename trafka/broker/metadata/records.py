"""The records of the cluster metadata log (trafka/storage/metadata_log.py), declared once.

Kafka's controller writes one record per change to its metadata log; trafka keeps the same
facts under Kafka's record names. The encoding is trafka's own and simple:

* key:   JSON `{"type": "<record name>", "version": <int>, "entity": [<the entity's fields>]}`
* value: JSON object of the record's fields (the entity's fields included)

A record's key names what it is about (its type and entity), so the image is "the last record
of each key", as a compacted topic is. A record removes what it names when its type is a
removal (`removes`: RemoveAccessControlEntryRecord, RemoveUserScramCredentialRecord, and
RemoveTopicRecord, which removes every PartitionRecord of its topic: a removal's entity is a
prefix of the removed records' entities; it also removes the topic's TopicRecord and its TOPIC
ConfigRecords), or when a field says so (`removed_when`: a
ConfigRecord whose value is null, a ClientQuotaRecord with remove true, as in Kafka).

A version above the one declared here was written by a newer trafka: the start stops rather
than misread it. A record type unknown here is skipped with a log line.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

from trafka.storage.errors import StorageError

log = logging.getLogger("trafka.broker")

# Made once: json.dumps with arguments builds a new encoder at every call (most of a record's
# encoding time). The bytes are json.dumps's with the same arguments.
_KEY_JSON = json.JSONEncoder(separators=(",", ":"))
_VALUE_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
_decode_json = json.JSONDecoder().decode
_json_string = json.encoder.encode_basestring_ascii  # a str as json.dumps writes it
_KEY_HEAD = re.compile(rb'\{"type":"(\w+)","version":(\d+),"entity":')

# ConfigRecord resource types (Kafka's ConfigResource.Type codes).
TOPIC, BROKER, GROUP, CLIENT_METRICS = 2, 4, 32, 16
RESOURCE_TYPE_NAMES = {TOPIC: "TOPIC", BROKER: "BROKER", GROUP: "GROUP", CLIENT_METRICS: "CLIENT_METRICS"}


@dataclass(frozen=True)
class RecordType:
    name: str
    version: int
    entity: tuple[str, ...]  # the fields that make the key
    removes: str | None = None  # a removal: of the records of this type under its entity
    removed_when: Callable[[dict], bool] | None = None  # a field's value that makes it a removal
    doc: str = ""


RECORD_TYPES: dict[str, RecordType] = {t.name: t for t in (
    RecordType("ProducerIdsRecord", 0, (), doc="broker_id, broker_epoch, next_producer_id: the first id of the next block"),
    RecordType("FeatureLevelRecord", 0, ("name",),
               doc="name, feature_level; epoch: the finalized-features epoch after this change (trafka's)"),
    RecordType("ConfigRecord", 0, ("resource_type", "resource_name", "name"), removed_when=lambda v: v.get("value") is None,
               doc="resource_type (2 TOPIC, 4 BROKER, 16 CLIENT_METRICS, 32 GROUP), resource_name, name, "
                   "value (null: removed)"),
    RecordType("ClientQuotaRecord", 0, ("entity", "key"), removed_when=lambda v: bool(v.get("remove")),
               doc="entity [[type, name]], key, value, remove"),
    RecordType("AccessControlEntryRecord", 0, ("id",),
               doc="id, resource_type, resource_name, pattern_type, principal, host, operation, permission_type"),
    RecordType("RemoveAccessControlEntryRecord", 0, ("id",), removes="AccessControlEntryRecord"),
    RecordType("UserScramCredentialRecord", 0, ("name", "mechanism"),
               doc="name, mechanism, salt, stored_key, server_key, iterations (base64; never a password)"),
    RecordType("RemoveUserScramCredentialRecord", 0, ("name", "mechanism"), removes="UserScramCredentialRecord"),
    RecordType("TopicRecord", 0, ("topic_id",), doc="topic_id (hex), name"),
    RecordType("PartitionRecord", 0, ("topic_id", "partition_id"),
               doc="topic_id, partition_id; replicas, leader, leader_epoch, isr, target_replicas, "
                   "original_replicas where they differ from a new partition's (null: as new)"),
    # Removes the topic's TopicRecord, its PartitionRecords and its TOPIC ConfigRecords
    # (ClusterMetadata._update_image), as Kafka's replay of it drops the topic's configs.
    RecordType("RemoveTopicRecord", 0, ("topic_id",), removes="PartitionRecord"),
)}


class MetadataRecordError(StorageError):
    """A metadata record this trafka cannot read: the start stops, naming it."""


@dataclass(frozen=True)
class MetadataRecord:
    type: str
    fields: dict = field(hash=False)

    def __post_init__(self):
        if self.type not in RECORD_TYPES:
            raise ValueError(f"no metadata record type {self.type}")

    @property
    def record_type(self) -> RecordType:
        return RECORD_TYPES[self.type]

    @property
    def entity(self) -> tuple:
        fields = self.fields
        return tuple([_hashable(fields[name]) for name in RECORD_TYPES[self.type].entity])

    @property
    def removal(self) -> bool:
        kind = self.record_type
        return kind.removes is not None or (kind.removed_when is not None and kind.removed_when(self.fields))

    @property
    def target(self) -> str:
        """The type of the records this one sets or removes."""
        return self.record_type.removes or self.type

    def key(self) -> bytes:
        return self._key

    @cached_property
    def _key(self) -> bytes:  # worked out once: the image, the log and the snapshot all ask
        return encode_key(self.type, self.entity)

    def encode(self) -> tuple[bytes, bytes]:
        return self.key(), _VALUE_JSON.encode(self.fields).encode()


def _hashable(value):
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


def _listed(value):
    return [_listed(v) for v in value] if isinstance(value, tuple) else value


def encode_key(type_name: str, entity: tuple) -> bytes:
    kind = RECORD_TYPES[type_name]
    if all([type(v) is str or type(v) is int for v in entity]):  # most keys: built without the encoder
        parts = ",".join([_json_string(v) if type(v) is str else str(v) for v in entity])
        return f'{{"type":{_json_string(type_name)},"version":{kind.version},"entity":[{parts}]}}'.encode()
    return _KEY_JSON.encode({"type": type_name, "version": kind.version, "entity": _listed(entity)}).encode()


def decode(key: bytes, value: bytes | None, where: str) -> MetadataRecord | None:
    """The record, or None for a type this trafka does not know (skipped with a log line)."""
    try:
        head = _KEY_HEAD.match(key)  # what encode_key writes; anything else is parsed whole
        if head is not None:
            type_name, version = head[1].decode(), int(head[2])
        else:
            parsed = json.loads(key)
            type_name, version = parsed["type"], int(parsed["version"])
        fields = _decode_json(value.decode()) if value is not None else {}
        if not isinstance(fields, dict):
            raise TypeError("the value is not a JSON object")
    except (ValueError, KeyError, TypeError) as exc:
        raise MetadataRecordError(f"{where}: unreadable metadata record ({exc})") from None
    kind = RECORD_TYPES.get(type_name)
    if kind is None:
        log.warning("%s: skipping a metadata record of unknown type %s", where, type_name)
        return None
    if version > kind.version:
        raise MetadataRecordError(f"{where}: {type_name} version {version} was written by a newer trafka "
                                  f"(this one reads up to {kind.version})")
    missing = [name for name in kind.entity if name not in fields]
    if missing:
        raise MetadataRecordError(f"{where}: {type_name} lacks {', '.join(missing)}")
    record = MetadataRecord(type_name, fields)
    if version == kind.version:  # the key as written is the key encode_key gives: not worked out again
        record.__dict__["_key"] = bytes(key)
    return record


def config_record(resource_type: int, resource_name: str, name: str, value: str | None) -> MetadataRecord:
    return MetadataRecord("ConfigRecord", {"resource_type": resource_type, "resource_name": resource_name,
                                           "name": name, "value": value})


def config_changes(resource_type: int, resource_name: str, before: dict[str, str],
                   after: dict[str, str]) -> list[MetadataRecord]:
    """The ConfigRecords that turn a resource's configs `before` into `after`."""
    changes = [config_record(resource_type, resource_name, name, None) for name in sorted(before) if name not in after]
    changes += [config_record(resource_type, resource_name, name, value) for name, value in sorted(after.items())
                if before.get(name) != value]
    return changes


def replay_configs(resources: dict[str, dict[str, str]], record: MetadataRecord) -> None:
    """Apply a ConfigRecord to resource name -> {config name: value} (a resource without
    configs is left out)."""
    name, resource = record.fields["name"], record.fields["resource_name"]
    if record.removal:
        values = resources.get(resource, {})
        values.pop(name, None)
        if not values:
            resources.pop(resource, None)
    else:
        resources.setdefault(resource, {})[name] = str(record.fields["value"])
