"""The upgrade from the JSON files older trafkas kept cluster metadata in to the metadata log.

On the first start with an empty metadata log, every file below found in the given
directories is read, all of them become one batch of records (so a crash leaves either none
imported or all), and each file is then renamed to `<name>.migrated`: nobody's ACLs,
credentials or configs vanish, and none is imported twice. A file that cannot be read stops
the start, naming it, as it did before. Once the log holds anything these files are never
read again (a file put back later is ignored with a warning).
"""

from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path
from typing import Callable

from trafka.broker.metadata.records import BROKER, CLIENT_METRICS, GROUP, MetadataRecord, config_record
from trafka.storage.errors import StorageError
from trafka.storage.files import fsync_dir

log = logging.getLogger("trafka.broker")

MIGRATED_SUFFIX = ".migrated"


def _producer_ids(text: str, path: Path) -> list[MetadataRecord]:
    try:
        next_id = int(text.strip())
    except ValueError:
        raise StorageError(f"{path} is corrupt: it must hold the next free producer id; put a number above every "
                           "producer id in the logs there (trafka dump-log shows them)") from None
    return [MetadataRecord("ProducerIdsRecord", {"broker_id": -1, "broker_epoch": -1, "next_producer_id": next_id})]


def _features(data, path: Path) -> list[MetadataRecord]:
    epoch = int(data["epoch"])
    return [MetadataRecord("FeatureLevelRecord", {"name": str(name), "feature_level": int(level), "epoch": epoch})
            for name, level in sorted(data["levels"].items())]


def _quotas(data, path: Path) -> list[MetadataRecord]:
    records = []
    for item in data:
        entity = sorted([str(t), n] for t, n in item["entity"])
        for key, value in sorted(item["values"].items()):
            records.append(MetadataRecord("ClientQuotaRecord", {"entity": entity, "key": str(key),
                                                                "value": float(value), "remove": False}))
    return records


def _configs(resource_type: int):
    def convert(data, path: Path) -> list[MetadataRecord]:
        return [config_record(resource_type, str(resource), str(name), str(value))
                for resource, values in sorted(data.items()) for name, value in sorted(values.items())]
    return convert


def _acls(data, path: Path) -> list[MetadataRecord]:
    fields = ("resource_type", "resource_name", "pattern_type", "principal", "host", "operation", "permission_type")
    return [MetadataRecord("AccessControlEntryRecord", {"id": str(uuid.uuid4()), **{f: entry[f] for f in fields}})
            for entry in data]


def _scram(data, path: Path) -> list[MetadataRecord]:
    return [MetadataRecord("UserScramCredentialRecord", {
        "name": user, "mechanism": mechanism, "salt": c["salt"], "stored_key": c["stored_key"],
        "server_key": c["server_key"], "iterations": int(c["iterations"])})
        for user, mechanisms in sorted(data.items()) for mechanism, c in sorted(mechanisms.items())]


def _cluster_state(data, path: Path) -> list[MetadataRecord]:
    partitions: dict[tuple[str, int], dict] = {}

    def entry(topic: str, p) -> dict:
        return partitions.setdefault((topic, int(p)), {
            "topic_id": topic, "partition_id": int(p), "replicas": None, "leader": None, "leader_epoch": None,
            "isr": None, "target_replicas": None, "original_replicas": None})

    for topic, parts in data.get("assignments", {}).items():
        for p, replicas in parts.items():
            entry(topic, p)["replicas"] = [int(r) for r in replicas]
    for topic, parts in data.get("leadership", {}).items():
        for p, (leader, epoch, isr) in parts.items():
            entry(topic, p).update(leader=int(leader), leader_epoch=int(epoch), isr=[int(r) for r in isr])
    for topic, parts in data.get("reassignments", {}).items():
        for p, (target, before) in parts.items():
            entry(topic, p).update(target_replicas=[int(r) for r in target], original_replicas=[int(r) for r in before])
    return [MetadataRecord("PartitionRecord", fields) for _, fields in sorted(partitions.items())]


# file name -> (JSON or not, converter, what the file must hold, for the error)
LEGACY_FILES: dict[str, tuple[bool, Callable, str]] = {
    "producer_ids": (False, _producer_ids, ""),
    "finalized_features": (True, _features, '{"epoch": N, "levels": {"feature": level}}'),
    "client_quotas": (True, _quotas, '[{"entity": [[type, name]], "values": {key: value}}]'),
    "group_configs": (True, _configs(GROUP), '{"group": {"name": "value"}}'),
    "client_metrics": (True, _configs(CLIENT_METRICS), '{"name": {"metrics": ..., "interval.ms": ...}}'),
    "broker_configs": (True, _configs(BROKER), '{"": {"name": "value"}, "0": {...}}'),
    "acls.json": (True, _acls, "a JSON list of ACL bindings"),
    "scram_credentials.json": (True, _scram, '{"user": {"SCRAM-SHA-256": {...}}}'),
    "cluster_state.json": (True, _cluster_state, '{"assignments": ..., "leadership": ..., "reassignments": ...}'),
}


def legacy_files(directories: list[Path]) -> list[Path]:
    found, seen = [], set()
    for directory in directories:
        for name in LEGACY_FILES:
            path = Path(directory) / name
            if path.resolve() not in seen and path.is_file():
                seen.add(path.resolve())
                found.append(path)
    return found


def read_legacy(path: Path) -> list[MetadataRecord]:
    is_json, convert, shape = LEGACY_FILES[path.name]
    try:
        text = path.read_text()
        return convert(json.loads(text) if is_json else text, path)
    except StorageError:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        what = {"acls.json": "ACL file", "scram_credentials.json": "SCRAM credentials file"}.get(path.name)
        if what:  # the words the older trafka used for these two
            raise StorageError(f"unreadable {what} {path}: {exc}") from None
        raise StorageError(f"{path} is corrupt ({exc}): it must hold {shape}; fix it or move it away "
                           "(an older trafka's file, imported into the metadata log at this first start)") from None


def import_legacy(metadata, directories: list[Path]) -> bool:
    """Import the older files into the (empty) metadata log as one batch; True if any was."""
    files = legacy_files(directories)
    if not files:
        return False
    records = [record for path in files for record in read_legacy(path)]
    metadata.write(records)
    for path in files:
        path.rename(path.with_name(path.name + MIGRATED_SUFFIX))
        fsync_dir(path.parent)
    log.info("imported %d records of %s into the metadata log; the files are renamed to *%s", len(records),
             ", ".join(str(p) for p in files), MIGRATED_SUFFIX)
    return True


def warn_leftovers(directories: list[Path]) -> None:
    """Files of an older trafka beside a metadata log that already holds the state: ignored."""
    for path in legacy_files(directories):
        log.warning("ignoring %s: the metadata log holds this state since the upgrade (trafka metadata shows it)", path)
