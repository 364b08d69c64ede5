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
snapshot, the whole image is written as a snapshot and the older segments go.

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
from trafka.broker.metadata.records import TOPIC, MetadataRecord, decode, encode_key
from trafka.storage.metadata_log import MetadataLog, read_offline

log = logging.getLogger("trafka.broker")

Replay = Callable[[MetadataRecord], None]


class ClusterMetadata:
    def __init__(self, data_dir: Path | None, *, clock=None, migrate_from: Iterable[Path] = (), lock: bool = True):
        """`data_dir`: where the log lives (a simulated cluster's own data dir); None: in memory.
        `migrate_from`: the directories an older trafka kept this data's JSON files in."""
        self.image: dict[bytes, MetadataRecord] = {}
        # topic id -> its PartitionRecords' keys; ("configs", topic name) -> its ConfigRecords' keys
        self._topic_keys: dict[object, set[bytes]] = {}
        self._replays: dict[str, list[Replay]] = {}
        self._batched: list[MetadataRecord] | None = None  # inside one_batch(): written at its end
        self.log = MetadataLog(data_dir, clock=clock, lock=lock) if data_dir is not None else None
        self.fresh = self.log is None or self.log.empty  # a first start: nothing was ever written
        if self.log is not None:
            try:
                self._load(list(migrate_from))
            except BaseException:
                self.log.close()
                raise

    def _load(self, migrate_from: list[Path]) -> None:
        for logged in self.log.read():
            where = f"{self.log.directory} " + ("(snapshot)" if logged.offset < 0 else f"offset {logged.offset}")
            record = decode(logged.key, logged.value, where)
            if record is not None:
                self._update_image(record)
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

    def _update_image(self, record: MetadataRecord) -> None:
        if record.type == "RemoveTopicRecord":
            self._remove_topic(record.fields["topic_id"])
        elif record.record_type.removes is not None:
            prefix = record.entity
            for key, existing in list(self.image.items()):
                if existing.type == record.target and existing.entity[:len(prefix)] == prefix:
                    del self.image[key]
        elif record.removal:
            self.image.pop(record.key(), None)
            if record.type == "ConfigRecord" and record.fields["resource_type"] == TOPIC:
                self._topic_keys.get(("configs", record.fields["resource_name"]), set()).discard(record.key())
        else:
            key = record.key()
            self.image[key] = record
            if record.type == "PartitionRecord":
                self._topic_keys.setdefault(record.fields["topic_id"], set()).add(key)
            elif record.type == "ConfigRecord" and record.fields["resource_type"] == TOPIC:
                self._topic_keys.setdefault(("configs", record.fields["resource_name"]), set()).add(key)

    def _remove_topic(self, topic_id: str) -> None:
        """A RemoveTopicRecord: the topic's TopicRecord, its PartitionRecords and its TOPIC
        ConfigRecords go (through `_topic_keys`: a DeleteTopics of 500 topics does not scan the
        image 500 times)."""
        topic = self.image.pop(encode_key("TopicRecord", (topic_id,)), None)
        for key in self._topic_keys.pop(topic_id, ()):
            self.image.pop(key, None)
        if topic is not None:
            for key in self._topic_keys.pop(("configs", topic.fields["name"]), ()):
                self.image.pop(key, None)

    def records(self, *types: str) -> list[MetadataRecord]:
        """The image's records of these types (every one without types), in key order."""
        image = self.image
        return [image[k] for k in sorted(k for k, record in image.items() if not types or record.type in types)]

    # --- stores -------------------------------------------------------------------------------

    def register(self, types: Iterable[str], replay: Replay) -> None:
        """`replay` gets every record of these types: the image's now, each new one once durable."""
        types = tuple(types)
        for record in self.records(*types):
            replay(record)
        for type_name in types:
            self._replays.setdefault(type_name, []).append(replay)

    def write(self, records: list[MetadataRecord]) -> None:
        """Append the records as one durable batch, then apply them. Raises what the append
        raises (StorageError, OSError); nothing is applied then. Inside `one_batch` they are
        applied now and appended at its end."""
        if not records:
            return
        if self._batched is not None:
            self._batched += records
        elif self.log is not None:
            self.log.append([r.encode() for r in records])
        for record in records:
            self._update_image(record)
            for replay in self._replays.get(record.type, ()):
                replay(record)
        if self._batched is None and self.log is not None and self.log.snapshot_due:
            self.snapshot()

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
            self.log.append([r.encode() for r in batched])
            if self.log.snapshot_due:
                self.snapshot()

    def snapshot(self) -> None:
        try:
            self.log.write_snapshot([r.encode() for r in self.records()])
        except OSError as exc:  # the log still holds everything: the next write tries again
            log.error("%s: cannot write a metadata snapshot (%s)", self.log.directory, exc.strerror or exc)

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
    for logged in read_offline(data_dir):
        record = decode(logged.key, logged.value, f"metadata log offset {logged.offset}" if logged.offset >= 0
                        else "metadata snapshot")
        if record is not None:
            metadata._update_image(record)
    return metadata
