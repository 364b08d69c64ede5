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
from dataclasses import dataclass
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


class MetadataRecord:
    """One record: its type and fields. Made from fields (a change), or from its key and value
    as written (read back, or made as bytes: `new_partition_record`), when its fields are
    decoded at first use and its bytes are not encoded again."""

    __slots__ = ("type", "_fields", "_key", "_value", "_ids")

    def __init__(self, type: str, fields: dict | None = None, *, key: bytes | None = None,
                 value: bytes | None = None):
        if type not in RECORD_TYPES:
            raise ValueError(f"no metadata record type {type}")
        if fields is None and value is None:
            raise ValueError("a metadata record needs its fields or its value")
        self.type, self._fields, self._key, self._value = type, fields, key, value
        self._ids: tuple[str, int] | None = None  # a new partition's (new_partition_record)

    @property
    def fields(self) -> dict:
        if self._fields is None:
            self._fields = decode_value(self.type, self._key, self._value, "metadata record").fields
        return self._fields

    def __eq__(self, other) -> bool:
        return isinstance(other, MetadataRecord) and (self.type, self.fields) == (other.type, other.fields)

    def __hash__(self) -> int:
        return hash((self.type, self.key()))

    def __repr__(self) -> str:
        return f"MetadataRecord(type={self.type!r}, fields={self.fields!r})"

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

    @property
    def new_partition(self) -> bool:
        """A PartitionRecord of a partition as new (every state field null)."""
        if self.type != "PartitionRecord":
            return False
        if self._ids is not None:
            return True
        if self._value is not None:
            return is_new_partition(self._value)
        f = self._fields
        return all(f.get(name) is None for name in _PARTITION_STATE)

    @property
    def new_partition_ids(self) -> tuple[str, int] | None:
        """(topic id, partition) of a record new_partition_record made (partition_ids of its key)."""
        return self._ids

    def key(self) -> bytes:
        """Worked out once: the image, the log and the snapshot all ask."""
        if self._key is None:
            self._key = encode_key(self.type, self.entity)
        return self._key

    def encode(self) -> tuple[bytes, bytes]:
        value = self._value
        return self.key(), (value if value is not None else _VALUE_JSON.encode(self._fields).encode())


_PARTITION_STATE = ("replicas", "leader", "leader_epoch", "isr", "target_replicas", "original_replicas")


def new_partition_record(topic_id: str, partition: int) -> MetadataRecord:
    """A new partition's PartitionRecord (its state fields null), made as the bytes `encode`
    gives for those fields: a CreateTopics of 5,000 partitions makes no dict per partition."""
    entity = f"{_json_string(topic_id)},{int(partition)}"
    record = MetadataRecord(
        "PartitionRecord", key=f'{_PARTITION_KEY_TEXT}{entity}]}}'.encode(),
        value=f'{_NEW_PARTITION_HEAD_TEXT}{int(partition)}{_NEW_PARTITION_TAIL_TEXT}{_json_string(topic_id)[1:]}}}'.encode())
    record._ids = (topic_id, int(partition))  # what partition_ids(key) would read back
    return record


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


def decode_head(key: bytes, where) -> tuple[str, bool] | None:
    """A record key's type, and whether it is of this trafka's version (then the key is the one
    encode_key gives); None for a type this trafka does not know (skipped with a log line).
    `where` names the record in an error (anything that formats as text)."""
    try:
        head = _KEY_HEAD.match(key)  # what encode_key writes; anything else is parsed whole
        if head is not None:
            type_name, version = head[1].decode(), int(head[2])
        else:
            parsed = json.loads(key)
            type_name, version = parsed["type"], int(parsed["version"])
    except (ValueError, KeyError, TypeError) as exc:
        raise MetadataRecordError(f"{where}: unreadable metadata record ({exc})") from None
    kind = RECORD_TYPES.get(type_name)
    if kind is None:
        log.warning("%s: skipping a metadata record of unknown type %s", where, type_name)
        return None
    if version > kind.version:
        raise MetadataRecordError(f"{where}: {type_name} version {version} was written by a newer trafka "
                                  f"(this one reads up to {kind.version})")
    return type_name, version == kind.version


def decode_value(type_name: str, key: bytes, value: bytes | None, where, current: bool = True) -> MetadataRecord:
    """The record of a known type from its value (`current`: its key is of this version, kept
    as it is rather than encoded again)."""
    try:
        fields = _decode_json(value.decode()) if value is not None else {}
        if not isinstance(fields, dict):
            raise TypeError("the value is not a JSON object")
    except (ValueError, TypeError) as exc:
        raise MetadataRecordError(f"{where}: unreadable metadata record ({exc})") from None
    missing = [name for name in RECORD_TYPES[type_name].entity if name not in fields]
    if missing:
        raise MetadataRecordError(f"{where}: {type_name} lacks {', '.join(missing)}")
    return MetadataRecord(type_name, fields, key=bytes(key) if current else None)


def decode(key: bytes, value: bytes | None, where) -> MetadataRecord | None:
    """The record, or None for a type this trafka does not know (skipped with a log line)."""
    head = decode_head(key, where)
    return None if head is None else decode_value(head[0], key, value, where, head[1])


_PARTITION_KEY_HEAD = encode_key("PartitionRecord", ("",))[:-3]  # ...,"entity":["
_PARTITION_KEY_TEXT = _PARTITION_KEY_HEAD[:-1].decode()  # ...,"entity":[
# A PartitionRecord's value as a new partition's (every state field null), as encode() writes it.
_NEW_PARTITION_HEAD = b'{"isr":null,"leader":null,"leader_epoch":null,"original_replicas":null,"partition_id":'
_NEW_PARTITION_TAIL = b',"replicas":null,"target_replicas":null,"topic_id":"'
_NEW_PARTITION_HEAD_TEXT, _NEW_PARTITION_TAIL_TEXT = _NEW_PARTITION_HEAD.decode(), _NEW_PARTITION_TAIL.decode()


def partition_ids(key: bytes) -> tuple[str, int] | None:
    """(topic id hex, partition) a PartitionRecord's key names, if it is as encode_key writes it."""
    start = len(_PARTITION_KEY_HEAD)
    end = key.find(b'"', start)
    if not key.startswith(_PARTITION_KEY_HEAD) or end < 0:
        return None
    number = key[end + 2:-2]  # after the id's quote and comma, before ]}
    return (key[start:end].decode(), int(number)) if number.isdigit() else None


def is_new_partition(value: bytes | None) -> bool:
    """Whether a PartitionRecord's value (as written) is a new partition's: no replicas, leader
    or reassignment of its own."""
    return value is not None and value.startswith(_NEW_PARTITION_HEAD) and _NEW_PARTITION_TAIL in value


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
