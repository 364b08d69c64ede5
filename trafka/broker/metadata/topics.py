"""Topics in the metadata log: what Kafka's controller writes for them, and the topic set read back.

A topic is a TopicRecord (its id and name), one PartitionRecord per partition (written with
null placement fields when the partition is made: it exists, placed as a new partition; the
controller writes its own PartitionRecords over it when the placement or leadership differs),
and a ConfigRecord on resource type TOPIC (2) per config override. DeleteTopics writes a
RemoveTopicRecord, which removes all of them (ClusterMetadata._update_image).

The LogManager (storage layer) never reads the log: the broker gives it the topics of the image
when it opens (`topics_of`), and a `journal` that it calls with each change before making it:
`journal` writes the change's records as one durable batch, so a CreateTopics of 500 topics is
one fsync, and a failed write leaves the LogManager as it was.
"""

from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path
from typing import Iterable

from trafka.broker.metadata.records import TOPIC, MetadataRecord, config_changes, config_record, new_partition_record
from trafka.storage.files import fsync_dir, remove_dir
from trafka.storage.topic_store import partition_dir
from trafka.storage.topic_store import TOPICS_DIR, TopicChange, TopicMetadata, read_topics

log = logging.getLogger("trafka.broker")

MIGRATED_TOPICS_DIR = TOPICS_DIR + ".migrated"


def creation_records(metadata: TopicMetadata) -> list[MetadataRecord]:
    topic_id = metadata.topic_id.hex
    records = [MetadataRecord("TopicRecord", {"topic_id": topic_id, "name": metadata.name})]
    records += [new_partition_record(topic_id, p) for p in range(metadata.partitions)]
    records += [config_record(TOPIC, metadata.name, name, value) for name, value in sorted(metadata.configs.items())]
    return records


def change_records(change: TopicChange) -> list[MetadataRecord]:
    metadata = change.metadata
    if change.kind == "created":
        return creation_records(metadata)
    if change.kind == "grown":
        return [new_partition_record(metadata.topic_id.hex, p) for p in range(change.old_partitions, metadata.partitions)]
    if change.kind == "configured":
        return config_changes(TOPIC, metadata.name, change.old_configs or {}, metadata.configs)
    if change.kind == "deleted":
        return [MetadataRecord("RemoveTopicRecord", {"topic_id": metadata.topic_id.hex})]
    raise ValueError(f"no topic change {change.kind}")


def journal(cluster_metadata, changes: list[TopicChange]) -> None:
    """Write the records of these topic changes as one durable batch (raises what the write
    raises: nothing is applied then)."""
    records: list[MetadataRecord] = []
    for change in changes:
        records += change_records(change)
    cluster_metadata.write(records)


def journal_topics(cluster, changes: list[TopicChange]) -> list[Path]:
    """A node's LogManager journal: the changes written to the cluster's metadata log, which
    every running node applies to itself as it is written (Cluster._publish), then the new
    partitions placed by the controller. Returns the partition directories deletions renamed
    aside on the running nodes, to be removed."""
    journal(cluster.metadata, changes)
    deleted = [change.metadata for change in changes if change.kind == "deleted"]
    if deleted:
        _drop_from_stopped_nodes(cluster, deleted)
    cluster.place_new(changes)
    return cluster.take_doomed()


def _drop_from_stopped_nodes(cluster, topics: list[TopicMetadata]) -> None:
    """A stopped node's partition directories of deleted topics go once the deletion is durable:
    it opens with the log's topics when it starts, and a topic made again under the same name
    must not find the old topic's records there (a partition directory carries no topic id)."""
    for node_id in sorted(getattr(cluster, "stopped", ())):
        data_dir = cluster.node(node_id).data_dir
        for metadata in topics:
            for partition in range(metadata.partitions):
                directory = partition_dir(data_dir, metadata.name, partition)
                if os.path.lexists(directory):
                    try:
                        remove_dir(directory)
                    except OSError as exc:  # moved aside as a stray when the node starts
                        log.error("cannot remove %s of deleted topic %s: %s", directory, metadata.name, exc)


def topics_of(cluster_metadata) -> list[TopicMetadata]:
    """Every topic of the image: name, id, partition count (its PartitionRecords), overrides."""
    configs: dict[str, dict[str, str]] = {}
    for record in cluster_metadata.records("ConfigRecord"):
        f = record.fields
        if f["resource_type"] == TOPIC:
            configs.setdefault(f["resource_name"], {})[f["name"]] = str(f["value"])
    topics = [record.fields for record in cluster_metadata.records("TopicRecord")]
    return [TopicMetadata(f["name"], uuid.UUID(hex=f["topic_id"]), cluster_metadata.partition_count(f["topic_id"]),
                          configs.get(f["name"], {})) for f in sorted(topics, key=lambda f: f["name"])]


def import_legacy_topics(cluster_metadata, directories: Iterable[Path]) -> None:
    """An older trafka's topics (`topics/<id>.json`, `topics/created.log`) into the log, once:
    their records as one batch, then each `topics/` renamed `topics.migrated`. A simulated
    cluster's nodes each had a copy: a topic is taken from the first node that has it. A topic the
    log has already (by id or name: a crash between the write and the rename, or an internal
    topic made since) is not imported again."""
    found = [d for d in directories if (d / TOPICS_DIR).is_dir()]
    if not found:
        return
    known = topics_of(cluster_metadata)
    ids, names = {m.topic_id for m in known}, {m.name for m in known}
    by_id: dict[uuid.UUID, TopicMetadata] = {}
    for directory in found:
        for metadata in read_topics(directory).topics:  # StorageError: the start stops, naming it
            if metadata.topic_id not in ids and metadata.name not in names:
                by_id.setdefault(metadata.topic_id, metadata)
    records: list[MetadataRecord] = []
    for metadata in by_id.values():
        records += creation_records(metadata)
    cluster_metadata.write(records)
    if by_id:
        log.warning("imported %d topics from %s into the metadata log", len(by_id),
                    ", ".join(str(d / TOPICS_DIR) for d in found))
    for directory in found:
        target = directory / MIGRATED_TOPICS_DIR
        if target.exists():
            target = directory / f"{MIGRATED_TOPICS_DIR}.{uuid.uuid4().hex}"
        os.replace(directory / TOPICS_DIR, target)
        fsync_dir(directory)

