"""`trafka metadata --data-dir DIR`: the cluster metadata image, read from the metadata log on
disk (trafka/storage/metadata_log.py) without a running broker: finalized features, the
producer-id block, client quotas, dynamic configs (BROKER, GROUP, CLIENT_METRICS), ACLs, SCRAM
users (mechanism and iterations; never a salt or key), the topics (name, id, partitions,
overrides), and the partitions whose replicas,
leadership or reassignment differ from a new partition's. Reads files only: safe beside a
running broker."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

SECTIONS = ("features", "producer-ids", "quotas", "configs", "acls", "scram", "topics", "partitions")


def add_arguments(parser) -> None:
    parser.add_argument("--data-dir", required=True, help="the broker's (or simulated cluster's) data directory")
    parser.add_argument("--section", action="append", choices=SECTIONS, help="print only these parts (repeatable)")


def _topic_names(metadata, data_dir: Path) -> dict[str, str]:
    """Topic id (hex) -> name: the log's TopicRecords, and an older trafka's topics/ files that
    no start has imported yet."""
    from trafka.storage.errors import StorageError
    from trafka.storage.topic_store import read_topics

    names: dict[str, str] = {}
    for directory in [data_dir, *sorted(data_dir.glob("broker-*"))]:
        if (directory / "topics").is_dir():
            try:
                names.update({m.topic_id.hex: m.name for m in read_topics(directory).topics})
            except StorageError:  # damaged topic metadata: topics show by id
                pass
    names.update({r.fields["topic_id"]: r.fields["name"] for r in metadata.records("TopicRecord")})
    return names


def _lines(metadata, data_dir: Path, wanted) -> list[str]:
    from trafka.broker.metadata.records import RESOURCE_TYPE_NAMES

    out: list[str] = []
    if "features" in wanted:
        out.append("FEATURES (set by UpdateFeatures; the others are at their defaults)")
        for r in metadata.records("FeatureLevelRecord"):
            out.append(f"  {r.fields['name']}={r.fields['feature_level']} (epoch {r.fields.get('epoch', '-')})")
    if "producer-ids" in wanted:
        out.append("PRODUCER IDS")
        for r in metadata.records("ProducerIdsRecord"):
            out.append(f"  next block starts at {r.fields['next_producer_id']}")
    if "quotas" in wanted:
        out.append("CLIENT QUOTAS")
        for r in metadata.records("ClientQuotaRecord"):
            entity = ",".join(f"{t}={'<default>' if n is None else n}" for t, n in r.fields["entity"])
            out.append(f"  {entity}: {r.fields['key']}={r.fields['value']:g}")
    if "configs" in wanted:
        out.append("CONFIGS")
        for r in metadata.records("ConfigRecord"):
            kind = RESOURCE_TYPE_NAMES.get(r.fields["resource_type"], str(r.fields["resource_type"]))
            name = r.fields["resource_name"] or "<cluster default>"
            out.append(f"  {kind} {name}: {r.fields['name']}={r.fields['value']}")
    if "acls" in wanted:
        out.append("ACLS")
        for r in metadata.records("AccessControlEntryRecord"):
            f = r.fields
            out.append(f"  {f['permission_type']} {f['principal']} from {f['host']} {f['operation']} on "
                       f"{f['resource_type']}:{f['pattern_type']}:{f['resource_name']}")
    if "scram" in wanted:
        out.append("SCRAM USERS")
        for r in metadata.records("UserScramCredentialRecord"):
            out.append(f"  {r.fields['name']} {r.fields['mechanism']} ({r.fields['iterations']} iterations)")
    if "topics" in wanted:
        from trafka.broker.metadata.topics import topics_of

        out.append("TOPICS")
        for topic in topics_of(metadata):
            configs = "".join(f" {k}={v}" for k, v in sorted(topic.configs.items()))
            out.append(f"  {topic.name} {topic.topic_id} partitions={topic.partitions}{configs}")
    if "partitions" in wanted:
        out.append("PARTITIONS (where they differ from a new partition: default replicas, led by the first, epoch 0)")
        names = _topic_names(metadata, data_dir)
        for r in metadata.records("PartitionRecord"):
            f = r.fields
            if all(f.get(k) is None for k in ("replicas", "leader", "target_replicas")):
                continue  # a partition as new: its existence only
            parts = [f"{names.get(f['topic_id'], str(uuid.UUID(hex=f['topic_id'])))}-{f['partition_id']}:"]
            if f["replicas"] is not None:
                parts.append(f"replicas {f['replicas']}")
            if f["leader"] is not None:
                parts.append(f"leader {f['leader']} epoch {f['leader_epoch']} isr {f['isr']}")
            if f["target_replicas"] is not None:
                parts.append(f"reassigning to {f['target_replicas']} from {f['original_replicas']}")
            out.append("  " + " ".join(parts))
    return out


def run(args) -> int:
    from trafka.broker.metadata.image import read_image
    from trafka.storage.errors import StorageError
    from trafka.storage.metadata_log import metadata_log_dir, snapshots

    data_dir = Path(args.data_dir)
    directory = metadata_log_dir(data_dir)
    if not directory.is_dir():
        print(f"trafka: no metadata log in {data_dir} (an older trafka's data dir keeps JSON files instead; "
              "the next start imports them)", file=sys.stderr)
        return 1
    try:
        metadata = read_image(data_dir)
    except (StorageError, OSError) as exc:
        print(f"trafka: {exc}", file=sys.stderr)
        return 1
    found = snapshots(directory)
    print(f"# Cluster metadata in {directory} ({f'snapshot at offset {found[-1][0]}' if found else 'no snapshot'}, "
          f"{metadata.record_count} records in the image)")
    for line in _lines(metadata, data_dir, set(args.section or SECTIONS)):
        print(line)
    return 0
