"""What each broker applies of the metadata log, in one place (Kafka's BrokerMetadataPublisher
handing each delta to ReplicaManager.applyDelta and the coordinators).

Every batch the cluster's metadata log takes is published once its image holds it
(`ClusterMetadata.subscribe`): `topics_delta` reads what it changed of the topics, and each node
whose logs are open applies that to itself (`BrokerPublisher.publish`): topics deleted (their
partition logs, their committed offsets, its replicas of them), created, grown and
reconfigured. A node that was stopped learns what it missed when its logs open again, from the
image (`topics_of`), which is the log replayed. A cluster of one is the same with one node.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

from trafka.broker.metadata.records import TOPIC, partition_ids
from trafka.storage.errors import StorageError
from trafka.storage.topic_store import TopicMetadata

log = logging.getLogger("trafka.broker")


class TopicsDelta:
    """What one batch of metadata records changed of the topics (Kafka's TopicsDelta)."""

    __slots__ = ("created", "deleted", "grown", "configured")

    def __init__(self) -> None:
        self.created: dict[str, str] = {}  # topic id (hex) -> name: TopicRecords
        self.deleted: list[uuid.UUID] = []  # RemoveTopicRecords
        self.grown: set[str] = set()  # topic ids (hex) with partitions as new: made, or made again
        self.configured: set[str] = set()  # topic names whose TOPIC ConfigRecords changed

    def __bool__(self) -> bool:
        return bool(self.created or self.deleted or self.grown or self.configured)


def topics_delta(records) -> TopicsDelta:
    delta = TopicsDelta()
    for record in records:
        kind = record.type
        if kind == "PartitionRecord":
            if record.new_partition:
                ids = record.new_partition_ids or partition_ids(record.key())
                if ids is not None:
                    delta.grown.add(ids[0])
        elif kind == "TopicRecord":
            delta.created[record.fields["topic_id"]] = record.fields["name"]
        elif kind == "RemoveTopicRecord":
            delta.deleted.append(uuid.UUID(hex=record.fields["topic_id"]))
        elif kind == "ConfigRecord" and record.fields["resource_type"] == TOPIC:
            delta.configured.add(record.fields["resource_name"])
    return delta


class BrokerPublisher:
    """One node's side of the metadata log: what it applies of each delta."""

    def __init__(self, cluster, node) -> None:
        self.cluster = cluster
        self.node = node

    def publish(self, delta: TopicsDelta, image) -> list[Path]:
        """Apply `delta` (with `image`, the metadata image that holds it) to this node; the
        partition directories its deletions renamed aside, to be removed. A storage error is
        logged and leaves this node out of line until its logs open again (from the image)."""
        try:
            return self._publish(delta, image)
        except (StorageError, OSError) as exc:
            log.error("broker %d: cannot apply a metadata change: %s", self.node.node_id, exc)
            return []

    def _publish(self, delta: TopicsDelta, image) -> list[Path]:
        logs = self.node.logs
        doomed: list[Path] = []
        deleted = []
        if delta.deleted:  # first: a topic may come back under the same name
            by_id = {metadata.topic_id: metadata for metadata in logs.topics.values()}
            for topic_id in delta.deleted:
                metadata = by_id.get(topic_id)
                if metadata is not None:
                    doomed += logs.apply_deleted(metadata)
                    deleted.append(metadata)
        logs.apply_created([TopicMetadata(name, uuid.UUID(hex=topic_id), image.partition_count(topic_id),
                                          image.topic_configs(name))
                            for topic_id, name in delta.created.items()])
        for topic_id in delta.grown.difference(delta.created):
            name = image.topic_name(topic_id)
            metadata = logs.topics.get(name) if name is not None else None
            if metadata is not None and metadata.partitions < image.partition_count(topic_id):
                logs.apply_grown(name, image.partition_count(topic_id))
        for name in delta.configured.difference(delta.created.values()):
            metadata = logs.topics.get(name)
            if metadata is not None and metadata.configs != (configs := image.topic_configs(name)):
                logs.apply_configured(name, configs)
        for metadata in deleted:
            self.cluster.replication.forget(metadata.name, metadata.topic_id)
            # Its group coordinator drops the topic's committed offsets for the groups it
            # coordinates, as each Kafka broker does when its metadata says the topic is gone
            # (onPartitionsDeleted).
            self.node.group_coordinator.on_topic_deleted(metadata.name)
        return doomed
