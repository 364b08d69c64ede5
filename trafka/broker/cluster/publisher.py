"""What each broker applies of the metadata log, in one place (Kafka's BrokerMetadataPublisher
handing each delta to ReplicaManager.applyDelta and the coordinators).

Every batch the cluster's metadata log takes is published once its image holds it
(`ClusterMetadata.subscribe`, `Cluster._publish`): a `MetadataDelta` of what it changed of the
topics (`topics_delta`, from its records) and of the partitions' state (each changed partition's
state before and after, which the controller worked out as it wrote them), and each running
node applies it to itself (`BrokerPublisher.publish`), in Kafka's order:
- topics deleted: their partition logs, its replicas of them, the committed offsets and share
  state its coordinators hold for them, the share-partitions it holds in flight;
- topics created, grown and reconfigured in its LogManager;
- partitions it now leads (`make_leader`: the new epoch, its followers, the high watermark
  held to the ISR; the coordinator shard of an internal partition loads), whose ISR or
  replicas changed while it leads (the high watermark hold follows), that it no longer leads
  (the shard unloads) or no longer holds (its copy goes); a new leader's records in flight of
  a share-partition start again from the durable state.
A node that was stopped learns what it missed when its logs open again, from the image
(`topics_of` and the controller's state), which is the log replayed. A cluster of one is the
same with one node.
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


class MetadataDelta:
    """One batch's changes: its topics' (TopicsDelta) and its partitions' (topic id, partition)
    -> (state before, state after), with each changed partition's topic name."""

    __slots__ = ("topics", "partitions", "names")

    def __init__(self, topics: TopicsDelta, partitions: dict, image) -> None:
        self.topics, self.partitions = topics, partitions
        self.names = {topic_id: image.topic_name(topic_id.hex) for topic_id in {key[0] for key in partitions}}

    def __bool__(self) -> bool:
        return bool(self.topics or self.partitions)


class BrokerPublisher:
    """One node's side of the metadata log: what it applies of each delta."""

    def __init__(self, cluster, node) -> None:
        self.cluster = cluster
        self.node = node

    def publish(self, delta: MetadataDelta, image) -> list[Path]:
        """Apply `delta` (with `image`, the metadata image that holds it) to this node; the
        partition directories its deletions renamed aside, to be removed. A storage error is
        logged and leaves this node out of line until its logs open again (from the image)."""
        try:
            doomed = self._topics(delta.topics, image)
            if delta.partitions and not self.cluster.building:  # its followers are being made
                self._partitions(delta)
            return doomed
        except (StorageError, OSError) as exc:
            log.error("broker %d: cannot apply a metadata change: %s", self.node.node_id, exc)
            return []

    def _topics(self, delta: TopicsDelta, image) -> list[Path]:
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
            # (onPartitionsDeleted); its share coordinator the topic's share state.
            self.node.group_coordinator.on_topic_deleted(metadata.name)
            self.node.share_coordinator.on_topic_deleted(metadata.topic_id)
        return doomed

    def _partitions(self, delta: MetadataDelta) -> None:
        """Kafka's applyLocalLeadersDelta and applyLocalFollowersDelta: what each changed
        partition's replica on this node is now."""
        node, me = self.node, self.node.node_id
        replication = self.cluster.replication
        for (topic_id, p), (before, after) in delta.partitions.items():
            name = delta.names.get(topic_id)
            if name is None or name not in node.logs.topics:
                continue
            if after.leader == me and _new_leader(before, after):
                replication.partition(node, name, p, topic_id).make_leader()
            elif after.leader == me:  # its ISR or replicas changed: the high watermark hold follows
                replica = replication.partition(node, name, p, topic_id)
                replica.apply_leadership()
                if len(after.replicas) > 1:
                    replica.maybe_advance_high_watermark()
            if me in before.replicas and me not in after.replicas:
                node.logs.drop_replica(name, p)  # moved away: its copy goes

    def load(self) -> None:
        """The node's logs opened (at start, or a stopped node starting): each partition it
        leads takes the leader's role the image gives it (Kafka's first publish, the whole image
        as one delta): its leader epoch on the batches it writes, its high watermark held to its
        ISR. A partition as new needs nothing (one replica, epoch 0: a log's own defaults)."""
        node, me = self.node, self.node.node_id
        controller = self.cluster.controller
        names = {metadata.topic_id: (name, metadata.partitions) for name, metadata in node.logs.topics.items()}
        for topic_id, p in controller.stated_partitions():
            name, partitions = names.get(topic_id, (None, 0))
            state = controller.partition(topic_id, p)
            if p >= partitions or state.leader != me:
                continue
            replica = self.cluster.replication.partition(node, name, p, topic_id)
            if self.cluster.building and len(state.replicas) > 1:
                replica.log.leader_epoch = state.leader_epoch  # the high watermark rule once its followers are made
            else:
                replica.apply_leadership()

    def elect(self, delta: MetadataDelta) -> None:
        """The coordinators' onElection and onResignation, once every node's replicas took their
        roles (a loaded transaction shard writes markers to the partitions' new leaders): the
        shard of an internal partition it now leads loads, of one it no longer leads unloads; a
        share-partition whose leader changed starts again from its durable state. Then the
        transaction markers that found no leader go, and waiting requests look again."""
        if self.cluster.building or not delta.partitions:
            return
        node, me = self.node, self.node.node_id
        moved = False
        for (topic_id, p), (before, after) in delta.partitions.items():
            name = delta.names.get(topic_id)
            if name is None or not _new_leader(before, after):
                continue
            moved = True
            if me not in (before.leader, after.leader):
                continue
            node.share_coordinator.leadership_lost(topic_id, p)
            runtime = node.coordinator_runtimes().get(name)
            if runtime is None:
                continue
            if after.leader != me:
                runtime.unload(p)
            elif p not in runtime.shards:
                runtime.load(p)  # the transaction coordinator finishes what it left
        if moved:
            node.txn_coordinator.retry_markers()  # not at the next timed-out-transaction check
            node.notify_data_arrived()


def _new_leader(before, after) -> bool:
    return after.leader != before.leader or after.leader_epoch != before.leader_epoch
