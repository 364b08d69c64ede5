"""ClusterMetadata: the metadata image, the metadata log it is written to, and the stores that
read it (Kafka's QuorumController and its control managers, scaled down to one process).

Every store of cluster metadata (producer-id blocks, finalized features, client quotas, group,
broker and client-metrics configs, ACLs, SCRAM credentials, the controller's partition state)
changes the same way, as Kafka's controller does:

1. the store works out the records of a change, changing nothing;
2. `write(records)` appends them to the metadata log as one batch and fsyncs it (a failure
   raises, and nothing is applied: the store is as before);
3. only then is each record applied: to the image (the last record of each key) and to every
   store registered for its type (`register(types, replay)`), through the same `replay` that
   rebuilt the store at start.

A store registers once; `register` replays the image's records of its types into it at once,
so the stores may be built in any order. When the log has grown past its bound since the last
snapshot, the broker's check writes the whole image as a snapshot in a worker thread
(`plan_snapshot`, `finish_snapshot`; trafka/broker/cluster/checks.py) and the older segments go.

On the first start over a data dir of an older trafka (an empty metadata log beside the old
JSON files) the files are read, written to the log as one batch, and renamed to
`<name>.migrated` (legacy.py). Without a data dir (unit tests) the image lives in memory only.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable

from trafka.broker.metadata.legacy import import_legacy, warn_leftovers
from trafka.broker.metadata.topics import import_legacy_topics
from trafka.broker.metadata.records import (TOPIC, MetadataRecord, decode_head, decode_value, encode_key,
                                            is_new_partition, new_partition_record, partition_ids)
from trafka.storage.metadata_log import MetadataLog, SnapshotPlan, read_offline

log = logging.getLogger("trafka.broker")

Replay = Callable[[MetadataRecord], None]


class ClusterMetadata:
    def __init__(self, data_dir: Path | None, *, clock=None, migrate_from: Iterable[Path] = (), lock: bool = True):
        """`data_dir`: where the log lives (a simulated cluster's own data dir); None: in memory.
        `migrate_from`: the directories an older trafka kept this data's JSON files in."""
        # The image: each key's last record as (type, its value as written), but for the
        # PartitionRecords of partitions as new (nearly all of them), which are only counted:
        # `_partitions`, each topic's partitions 0..n-1; a partition not in the image is as new
        # and its record follows from its key (`new_partition_record`). Kept encoded rather than
        # as dicts (5,000 partitions: ~1 MB instead of ~10 MB), a snapshot is these bytes, and
        # `records()` decodes what a store asks for.
        self.image: dict[bytes, tuple[str, bytes | None]] = {}
        self._partitions: dict[str, int] = {}  # topic id (hex) -> its partition count
        # topic id -> partition -> the key of its PartitionRecord in the image (those with a
        # state of their own); topic name -> its TOPIC ConfigRecords' keys: what a
        # RemoveTopicRecord removes, without scanning the image
        self._placed: dict[str, dict[int, bytes]] = {}
        self._topic_configs: dict[str, set[bytes]] = {}
        self._replays: dict[str, list[Replay]] = {}
        self._publishers: list[Callable[[list[MetadataRecord]], None]] = []
        self._batched: list[tuple[bytes, bytes]] | None = None  # inside one_batch(): written at its end
        self.log = MetadataLog(data_dir, clock=clock, lock=lock) if data_dir is not None else None
        self.fresh = self.log is None or self.log.empty  # a first start: nothing was ever written
        if self.log is not None:
            try:
                self._load(list(migrate_from))
            except BaseException:
                self.log.close()
                raise

    def _load(self, migrate_from: list[Path]) -> None:
        where = _Where(self.log.directory)
        for logged in self.log.read():
            where.offset = logged.offset
            self._load_record(logged.key, logged.value, where)
        if self.fresh:
            self.fresh = not import_legacy(self, migrate_from)
        else:
            warn_leftovers(migrate_from)
        import_legacy_topics(self, migrate_from)  # topics/ of a trafka before topics were records

    @classmethod
    def of_data_dir(cls, data_dir: Path, *, clock=None) -> "ClusterMetadata":
        """The metadata log of a cluster's data dir, opened by its `Cluster` (the controller and
        every node use that one). The first open imports an older trafka's files from the data
        dir and its node directories (`broker-<id>`)."""
        home = Path(data_dir).resolve()
        return cls(home, clock=clock, migrate_from=[home, *sorted(home.glob("broker-*"))])

    @classmethod
    def of(cls, metadata) -> "ClusterMetadata":
        """What a store was given: the broker's ClusterMetadata; None, an image in memory only (a
        store built alone in a unit test); a directory, a metadata log of its own there."""
        if isinstance(metadata, ClusterMetadata):
            return metadata
        return cls(None if metadata is None else Path(metadata), lock=False)

    # --- the image ----------------------------------------------------------------------------

    def _load_record(self, key: bytes, value: bytes | None, where) -> None:
        """A record read from the log or a snapshot into the image. Topics' and partitions'
        records (nearly all of a large image) go in as read: what the image needs of them is in
        their key; the others are decoded to see what they remove."""
        head = decode_head(key, where)
        if head is None:
            return
        type_name, current = head
        if current and value is not None and type_name == "TopicRecord":
            self.image[key] = (type_name, value)
            return
        ids = partition_ids(key) if current and value is not None and type_name == "PartitionRecord" else None
        if ids is not None:
            self._set_partition(key, ids, value, is_new_partition(value))
        else:
            self._update_image(decode_value(type_name, key, value, where, current), value)

    def _set_partition(self, key: bytes, ids: tuple[str, int], value: bytes | None, as_new: bool) -> None:
        topic_id, partition = ids
        if partition >= self._partitions.get(topic_id, 0):
            self._partitions[topic_id] = partition + 1
        placed = self._placed.setdefault(topic_id, {})
        if as_new:  # counted only
            self.image.pop(key, None)
            placed.pop(partition, None)
        else:
            self.image[key] = ("PartitionRecord", value)
            placed[partition] = key

    def _update_image(self, record: MetadataRecord, value: bytes | None) -> None:
        """Apply a record to the image; `value`: its value as written (or read)."""
        if record.type == "RemoveTopicRecord":
            self._remove_topic(record.fields["topic_id"])
        elif record.record_type.removes is not None:
            prefix, target = record.entity, record.target
            for key, (type_name, written) in list(self.image.items()):
                if type_name == target and self._decoded(key, type_name, written).entity[:len(prefix)] == prefix:
                    del self.image[key]
        elif record.removal:
            self.image.pop(record.key(), None)
            if record.type == "ConfigRecord" and record.fields["resource_type"] == TOPIC:
                self._topic_configs.get(record.fields["resource_name"], set()).discard(record.key())
        elif record.type == "PartitionRecord":
            key = record.key()
            ids = record.new_partition_ids or partition_ids(key)
            if ids is None:  # a key of an older version: kept whole
                ids = (record.fields["topic_id"], int(record.fields["partition_id"]))
                self._set_partition(key, ids, value, False)
            else:
                self._set_partition(key, ids, value, record.new_partition)
        else:
            key = record.key()
            self.image[key] = (record.type, value)
            if record.type == "ConfigRecord" and record.fields["resource_type"] == TOPIC:
                self._topic_configs.setdefault(record.fields["resource_name"], set()).add(key)

    @staticmethod
    def _decoded(key: bytes, type_name: str, value: bytes | None) -> MetadataRecord:
        return decode_value(type_name, key, value, "metadata image")

    def _remove_topic(self, topic_id: str) -> None:
        """A RemoveTopicRecord: the topic's TopicRecord, its PartitionRecords and its TOPIC
        ConfigRecords go (through `_placed` and `_topic_configs`: a DeleteTopics of 500 topics
        does not scan the image 500 times)."""
        topic_key = encode_key("TopicRecord", (topic_id,))
        topic = self.image.pop(topic_key, None)
        self._partitions.pop(topic_id, None)
        for key in self._placed.pop(topic_id, {}).values():
            self.image.pop(key, None)
        if topic is not None:
            for key in self._topic_configs.pop(self._decoded(topic_key, *topic).fields["name"], ()):
                self.image.pop(key, None)

    def records(self, *types: str, placed_only: bool = False) -> list[MetadataRecord]:
        """The image's records of these types (every one without types), in key order, decoded
        (each call decodes anew: a store asks at its start, the image keeps bytes).
        `placed_only`: without the PartitionRecords of partitions as new (no state of their own)."""
        image = self.image
        found = [(k, self._decoded(k, *image[k])) for k, (type_name, _) in image.items()
                 if not types or type_name in types]
        if (not types or "PartitionRecord" in types) and not placed_only:
            found += [(record.key(), record) for record in _new_partitions(self._as_new())]
        found.sort(key=lambda pair: pair[0])
        return [record for _, record in found]

    def _as_new(self) -> list[tuple[str, int, frozenset[int]]]:
        """Each topic's partition count and its partitions that are not as new (a copy)."""
        return [(topic_id, count, frozenset(self._placed.get(topic_id, ())))
                for topic_id, count in sorted(self._partitions.items())]

    def topic_name(self, topic_id: str) -> str | None:
        """The name of a topic (its id in hex) in the image, or None."""
        key = encode_key("TopicRecord", (topic_id,))
        found = self.image.get(key)
        return None if found is None else self._decoded(key, *found).fields["name"]

    def topic_configs(self, name: str) -> dict[str, str]:
        """A topic's config overrides in the image."""
        configs = {}
        for key in self._topic_configs.get(name, ()):
            fields = self._decoded(key, *self.image[key]).fields
            configs[fields["name"]] = str(fields["value"])
        return configs

    def partition_count(self, topic_id: str) -> int:
        """How many partitions a topic (its id in hex) has: its PartitionRecords 0..n-1."""
        return self._partitions.get(topic_id, 0)

    @property
    def record_count(self) -> int:
        """How many records the image holds (a snapshot's records)."""
        return len(self.image) + sum(count - len(self._placed.get(topic_id, ()))
                                     for topic_id, count in self._partitions.items())

    # --- stores -------------------------------------------------------------------------------

    def register(self, types: Iterable[str], replay: Replay, *, placed_only: bool = False) -> None:
        """`replay` gets every record of these types: the image's now, each new one once durable.
        `placed_only`: the image's PartitionRecords of partitions as new are left out (the
        controller: such a record changes none of its maps, and a start has thousands)."""
        types = tuple(types)
        for record in self.records(*types, placed_only=placed_only):
            replay(record)
        for type_name in types:
            self._replays.setdefault(type_name, []).append(replay)

    def write(self, records: list[MetadataRecord]) -> None:
        """Append the records as one durable batch, then apply them. Raises what the append
        raises (StorageError, OSError); nothing is applied then. Inside `one_batch` they are
        applied now and appended at its end."""
        if not records:
            return
        encoded = [r.encode() for r in records]
        if self._batched is not None:
            self._batched += encoded
        elif self.log is not None:
            self.log.append(encoded)
        for record, (_, value) in zip(records, encoded):
            self._update_image(record, value)
            for replay in self._replays.get(record.type, ()):
                replay(record)
        for publish in self._publishers:
            publish(records)

    def subscribe(self, publish: Callable[[list[MetadataRecord]], None]) -> None:
        """`publish(records)` gets each written batch once the image and the stores hold it (Kafka's
        metadata publishers, which get each delta after the image): what a broker applies to itself."""
        self._publishers.append(publish)

    @contextmanager
    def one_batch(self):
        """The writes made inside are applied as they are made and appended at the end as one
        durable batch, as `kafka-storage format` writes a new cluster's bootstrap records at once.
        For a Cluster being made only (a first start writes the cluster-level min.insync.replicas
        and each internal topic: one fsynced batch instead of four): nothing can see the applied
        state before the end, since a broker being made answers no one, and if the block or the
        append fails the start fails, so no one ever acts on records that were not written."""
        if self._batched is not None:
            raise RuntimeError("one_batch is already open")
        self._batched = []
        try:
            yield
            batched = self._batched
        finally:
            self._batched = None
        if batched and self.log is not None:
            self.log.append(batched)

    # --- snapshots ----------------------------------------------------------------------------

    @property
    def snapshot_due(self) -> bool:
        return self.log is not None and self.log.snapshot_due

    def plan_snapshot(self) -> SnapshotPlan:
        """The image as of now, to be written by `plan.write()` (in a worker thread: the broker
        does, ClusterChecks.snapshot_metadata, as Kafka's controller writes snapshots off its event
        loop) and finished by `finish_snapshot(plan)` here."""
        image = self.image
        return self.log.plan_snapshot(_snapshot_records([(key, image[key][1]) for key in sorted(image)],
                                                        self._as_new()))

    def finish_snapshot(self, plan: SnapshotPlan) -> None:
        if self.log is not None and not self.log.closed:
            self.log.finish_snapshot(plan)

    def write_planned(self, plan: SnapshotPlan) -> bool:
        """Write a planned snapshot (on any thread: it touches nothing of the image or the log);
        False, with a log line, when it could not be: the log still holds everything, and the
        next check tries again."""
        try:
            plan.write()
        except OSError as exc:
            log.error("%s: cannot write a metadata snapshot (%s)", self.log.directory, exc.strerror or exc)
            return False
        return True

    def snapshot(self) -> None:
        """Write a snapshot of the image now, on this thread."""
        plan = self.plan_snapshot()
        if self.write_planned(plan):
            self.finish_snapshot(plan)

    def maybe_snapshot(self) -> None:
        if self.snapshot_due:
            self.snapshot()

    @property
    def end_offset(self) -> int:
        """The metadata log's end offset (0 in memory): DescribeQuorum's high watermark."""
        return 0 if self.log is None else self.log.end_offset

    def close(self) -> None:
        if self.log is not None:
            self.log.close()


def read_image(data_dir: Path) -> ClusterMetadata:
    """The image of a data dir's metadata log, for the offline tools: its files are only read
    (a broker may be running); the result is in memory only."""
    metadata = ClusterMetadata(None)
    where = _Where("metadata log")
    for logged in read_offline(data_dir):
        where.offset = logged.offset
        metadata._load_record(logged.key, logged.value, where)
    return metadata


def _new_partitions(as_new: list[tuple[str, int, frozenset[int]]]):
    """The PartitionRecords of the partitions as new, which the image only counts."""
    for topic_id, count, placed in as_new:
        for partition in range(count):
            if partition not in placed:
                yield new_partition_record(topic_id, partition)


def _snapshot_records(items: list[tuple[bytes, bytes | None]], as_new: list[tuple[str, int, frozenset[int]]]):
    """A snapshot's records (made in the snapshot's worker thread): the image's, then those of
    the partitions as new."""
    yield from items
    for record in _new_partitions(as_new):
        yield record.encode()


class _Where:
    """Where a record was read, for an error about it: formatted only then (a start reads
    thousands of records)."""

    __slots__ = ("place", "offset")

    def __init__(self, place):
        self.place, self.offset = place, 0

    def __str__(self) -> str:
        return f"{self.place} " + ("(snapshot)" if self.offset < 0 else f"offset {self.offset}")
