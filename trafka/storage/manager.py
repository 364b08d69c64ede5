"""LogManager: owns the data directory, the topics, and one PartitionLog per partition.

Topic ids, partition counts and config overrides live under `<data>/topics/` (topic_store.py:
a file per topic, and one line of `created.log` per CreateTopics request), so topics, ids and
configs survive a restart. Partition data lives in `<data>/<topic>-<partition>/`.
"""

from __future__ import annotations

import fcntl
import logging
import os
from functools import partial
from concurrent.futures import ThreadPoolExecutor
import shutil
import uuid
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from trafka.storage.checkpoints import read_clean_shutdown, write_clean_shutdown
from trafka.storage.clock import Clock, SystemClock
from trafka.storage.config import LONG_MAX, LogConfig, topic_defaults_from_broker, validate_topic_config
from trafka.storage.errors import (
    InvalidConfig,
    InvalidPartitions,
    InvalidTopic,
    LogClosed,
    StorageError,
    StorageWriteFailed,
    TopicAlreadyExists,
    UnknownTopic,
)
from trafka.storage.files import DELETE_DIR_SUFFIX, atomic_write, fsync_dir, remove_dir, remove_dirs, replace_with, write_temporary
from trafka.storage.log import CLEAN_SHUTDOWN_FILE, CleanState, PartitionLog
from trafka.storage.topic_store import (
    CREATED_LOG,
    TOPICS_DIR,
    TopicChange,
    TopicMetadata,
    _collision_key,
    append_to_created_log,
    created_record,
    fold_created_log,
    log_deleted,
    metadata_path,
    move_aside_stray,
    parse_partition_dir,
    partition_dir,
    read_topics,
    validate_topic_name,
)

log = logging.getLogger("trafka.storage")

LOCK_FILE = ".lock"
# Partitions are flushed on close by this many threads: fsync releases the GIL, and the file
# system folds concurrent fsyncs into few journal commits (Kafka: num.recovery.threads.per.data.dir).
_CLOSE_THREADS = 16


class LogManager:
    def __init__(
        self,
        data_dir: str | os.PathLike,
        *,
        broker_config: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        topics: Iterable[TopicMetadata] | None = None,
        journal: Callable[[list[TopicChange]], None] | None = None,
    ):
        """`topics` and `journal`: the broker keeps the topics (in its metadata log) and tells the
        LogManager which exist at open; `journal(changes)` makes each change durable, and the
        broker applies it here (`apply_*`) before it returns the directories a deletion renamed
        aside (raising: nothing changes). Without them the topics are kept under `topics/`."""
        self.data_dir = Path(data_dir)
        self._journal = journal
        self._given_topics = None if topics is None else list(topics)
        self.clock = clock or SystemClock()
        # Topic-config defaults from the broker's log.* settings, over Kafka's own defaults.
        self.topic_defaults = topic_defaults_from_broker(broker_config or {})
        self.topics: dict[str, TopicMetadata] = {}
        # The partitions opened so far. A partition of a known topic that is not here has no
        # directory yet (created, or never written before a restart): log() opens it at its
        # first use, so thousands of them cost nothing until then.
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        self._configs: dict[str, LogConfig] = {}  # each topic's config, for partitions opened later
        self._shared_configs: dict[tuple, LogConfig] = {}  # by overrides: see _build_config
        # Bumped whenever a topic appears, grows or goes: answers cached on the topic set
        # (the broker's Metadata responses) are valid while it stays the same.
        self.generation = 0
        self._collisions: dict[str, str] = {}
        self._collisions_at: tuple[int, int] | None = None
        self._unsynced: list[TopicMetadata] = []  # created with sync=False: see sync_metadata
        self._in_created_log: set[uuid.UUID] = set()  # topics created by a line of created.log
        # Told of each segment roll, to run PartitionLog.flush_rolled in a worker thread (the
        # broker sets it); None: rolls flush at once.
        self.on_roll: Callable[[PartitionLog], None] | None = None
        # Called with (topic, partition) after each append to a partition log (set_append_hook).
        self._on_append: Callable[[str, int], None] | None = None
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self._given_topics is None:
            (self.data_dir / TOPICS_DIR).mkdir(exist_ok=True)
        self._lock_fd = self._lock_data_dir()
        self._load()

    def _rolled(self, partition_log: PartitionLog) -> None:
        if self.on_roll is None:
            partition_log.flush_rolled()
        else:
            self.on_roll(partition_log)

    def _lock_data_dir(self) -> int:
        fd = os.open(self.data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StorageError(f"{self.data_dir} is in use by another process") from None
        return fd

    def _metadata_path(self, metadata: TopicMetadata) -> Path:
        return metadata_path(self.data_dir, metadata.topic_id)

    def _partition_dir(self, topic: str, partition: int) -> Path:
        return partition_dir(self.data_dir, topic, partition)

    def _load(self) -> None:
        with os.scandir(self.data_dir) as entries:  # one listing, no stat per entry
            directories = [e.name for e in entries if e.is_dir()]
        present = set(directories)
        for name in directories:
            if name.endswith(DELETE_DIR_SUFFIX):
                log.info("removing %s, left by an interrupted topic deletion", self.data_dir / name)
                shutil.rmtree(self.data_dir / name, ignore_errors=True)
        clean = read_clean_shutdown(self.data_dir)
        if self._given_topics is not None:
            topics = self._given_topics
            self._given_topics = None
        else:
            stored = read_topics(self.data_dir)
            if stored.good_lines is not None:  # a line cut by a crash: later lines must not follow it
                atomic_write(self.data_dir / TOPICS_DIR / CREATED_LOG, "".join(line + "\n" for line in stored.good_lines))
            self._in_created_log = stored.in_log
            topics = stored.topics
        for metadata in topics:
            self.topics[metadata.name] = metadata
            try:
                config = self._build_config(metadata.name)
            except InvalidConfig as exc:
                path = self._metadata_path(metadata)
                where = path if path.exists() else path.with_name(CREATED_LOG)
                raise StorageError(f"{where}: topic {metadata.name}: {exc}; fix the file "
                                   "(its topic's data is untouched)") from None
            self._configs[metadata.name] = config
            for partition in range(metadata.partitions):
                state = clean.get((metadata.name, partition))
                if state is None and f"{metadata.name}-{partition}" not in present:
                    continue  # never written: opened at first use
                self._logs[(metadata.name, partition)] = PartitionLog(
                    self._partition_dir(metadata.name, partition), config, clock=self.clock, lazy=True,
                    on_roll=self._rolled, clean_state=state,
                )
        if (self.data_dir / CLEAN_SHUTDOWN_FILE).exists():
            # From now on a crash is unclean: the marker goes, durably, before anything is written.
            (self.data_dir / CLEAN_SHUTDOWN_FILE).unlink()
            fsync_dir(self.data_dir)
        for name in directories:
            named = parse_partition_dir(name)
            if named and named not in self._logs and not name.endswith(DELETE_DIR_SUFFIX):
                metadata = self.topics.get(named[0])
                if metadata is not None and named[1] < metadata.partitions:
                    continue  # opened at first use: its recovery point says how far it is good
                if self._journal is None or (self.data_dir / name / LOCK_FILE).exists():
                    log.warning("ignoring %s: no topic %s with that partition", self.data_dir / name, named[0])
                else:
                    move_aside_stray(self.data_dir, name)
        log.info("loaded %d topics, %d partitions from %s", len(self.topics),
                 sum(t.partitions for t in self.topics.values()), self.data_dir)

    def _write_metadata(self, metadata: TopicMetadata, *, sync: bool = True) -> None:
        if not sync:
            self._unsynced.append(TopicMetadata(metadata.name, metadata.topic_id, metadata.partitions, dict(metadata.configs)))
            return
        path = self._metadata_path(metadata)
        replace_with(write_temporary(path, metadata.to_json()), path)  # newer than a line of the log

    def sync_metadata(self) -> None:
        """Make the topics created with sync=False durable, all together, here and now: one
        line of topics/created.log (the broker does the same off its loop: take_unsynced,
        append_to_created_log in a worker thread, then synced, or drop_unsynced on failure;
        broker/log_tasks.sync_topic_metadata)."""
        pending = self.take_unsynced()
        if not pending:
            return
        try:
            append_to_created_log(self.data_dir, created_record(pending))
        except OSError as exc:
            self.drop_unsynced(pending, exc)
        self.synced(pending)

    def synced(self, pending: list[TopicMetadata]) -> None:
        """After their line was appended (in a worker thread): each topic is now held by the log,
        and one deleted meanwhile gets a `deleted` line, so it does not come back at the next
        start."""
        gone = []
        for metadata in pending:
            current = self.topics.get(metadata.name)
            if current is not None and current.topic_id == metadata.topic_id:
                self._in_created_log.add(metadata.topic_id)
            else:
                gone.append(str(metadata.topic_id))
        if gone:
            log_deleted(self.data_dir, gone)

    def take_unsynced(self) -> list[TopicMetadata]:
        pending, self._unsynced = self._unsynced, []
        return pending

    def drop_unsynced(self, pending: list[TopicMetadata], exc: OSError) -> None:
        """Topics whose line could not be written are dropped again (append_to_created_log cut
        back whatever part of it reached the disk); raises StorageWriteFailed naming them."""
        names = [metadata.name for metadata in pending]
        for pending_metadata in pending:
            name = pending_metadata.name
            metadata = self.topics.get(name)
            if metadata is None or metadata.topic_id != pending_metadata.topic_id:
                continue
            del self.topics[name]
            self._configs.pop(name, None)
            for partition in range(metadata.partitions):
                partition_log = self._logs.pop((name, partition), None)
                if partition_log is not None:
                    partition_log.delete()
        self.generation += 1
        raise StorageWriteFailed(f"cannot write topic metadata ({exc.strerror or exc}): {', '.join(names)}") from None

    # --- topics ---------------------------------------------------------------------------

    def topic(self, name: str) -> TopicMetadata:
        try:
            return self.topics[name]
        except KeyError:
            raise UnknownTopic(f"unknown topic {name}") from None

    def topic_by_id(self, topic_id: uuid.UUID) -> TopicMetadata:
        for metadata in self.topics.values():
            if metadata.topic_id == topic_id:
                return metadata
        raise UnknownTopic(f"unknown topic id {topic_id}")

    def _collision_keys(self) -> dict[str, str]:
        """Existing topics by _collision_key, rebuilt when the topic set changed."""
        if self._collisions_at != (self.generation, len(self.topics)):
            self._collisions = {_collision_key(t): t for t in self.topics}
            self._collisions_at = (self.generation, len(self.topics))
        return self._collisions

    def list_topics(self) -> list[str]:
        return sorted(self.topics)

    def validate_new_topic(self, name: str, partitions: int, configs: Mapping[str, str] | None = None) -> None:
        """All of CreateTopics' checks without creating anything (for validate_only)."""
        validate_topic_name(name)
        if name in self.topics:
            raise TopicAlreadyExists(f"topic {name} already exists")
        existing = self._collision_keys().get(_collision_key(name))
        if existing is not None:
            raise InvalidTopic(f"topic {name} collides with existing topic {existing}")
        if partitions < 1:
            raise InvalidPartitions(f"number of partitions must be at least 1, got {partitions}")
        validate_topic_config(configs or {})

    def create_topic(
        self,
        name: str,
        partitions: int,
        configs: Mapping[str, str] | None = None,
        *,
        topic_id: uuid.UUID | None = None,
        sync: bool = True,
    ) -> TopicMetadata:
        """Raises InvalidTopic, TopicAlreadyExists, InvalidPartitions, InvalidConfig.

        With sync=False the topic's metadata file is made durable by the next sync_metadata()
        (a CreateTopics request creating many topics calls it once, before answering)."""
        self.validate_new_topic(name, partitions, configs)
        metadata = TopicMetadata(name, topic_id or uuid.uuid4(), partitions, {k: str(v) for k, v in (configs or {}).items()})
        if self._journal is not None:
            self._journal([TopicChange("created", metadata)])
            return self.topic(name)
        self._write_metadata(metadata, sync=sync)
        return self._add_topic(metadata)

    def create_topics(self, wanted: list[tuple[str, int, Mapping[str, str]]]) -> list[TopicMetadata | StorageError]:
        """Several topics made durable together (CreateTopics: with a journal, one batch of
        records for the whole request): each one's TopicMetadata, or the StorageError that
        refused it. Raises what the journal raises (then none is created)."""
        results: list[TopicMetadata | StorageError] = []
        names: dict[str, str] = {}  # this request's collision keys
        for name, partitions, configs in wanted:
            try:
                self.validate_new_topic(name, partitions, configs)
                other = names.get(_collision_key(name))
                if other is not None:
                    raise (TopicAlreadyExists(f"topic {name} already exists") if other == name
                           else InvalidTopic(f"topic {name} collides with topic {other}"))
                names[_collision_key(name)] = name
                results.append(TopicMetadata(name, uuid.uuid4(), partitions, {k: str(v) for k, v in configs.items()}))
            except StorageError as exc:
                results.append(exc)
        made = [r for r in results if isinstance(r, TopicMetadata)]
        if self._journal is None:
            for metadata in made:
                self._write_metadata(metadata, sync=False)
            self.apply_created(made)
            self.sync_metadata()
        elif made:
            self._journal([TopicChange("created", metadata) for metadata in made])
        return results

    def apply_created(self, made: list[TopicMetadata]) -> None:
        """Topics made durable join the topic set (one here under its id already stays)."""
        made = [m for m in made if getattr(self.topics.get(m.name), "topic_id", None) != m.topic_id]
        present = set(os.listdir(self.data_dir)) if sum(m.partitions for m in made) > 100 else None
        for metadata in made:
            self._add_topic(metadata, present)

    def _add_topic(self, metadata: TopicMetadata, present: set[str] | None = None) -> TopicMetadata:
        name, partitions = metadata.name, metadata.partitions
        current = self._collisions_at == (self.generation, len(self.topics))
        self.topics[name] = metadata
        self.generation += 1
        if current:  # keep the collision index without rebuilding it for every new topic
            self._collisions[_collision_key(name)] = name
            self._collisions_at = (self.generation, len(self.topics))
        self._open_partitions(metadata, range(partitions), present)
        log.info("created topic %s (%s) with %d partitions", name, metadata.topic_id, partitions)
        return metadata

    def _open_partitions(self, metadata: TopicMetadata, partitions: range, present: set[str] | None = None) -> None:
        """No directory yet: it comes with the first write, the log with its first use (log()). A
        stale one is found in `present` (the data dir listed once, for a big CreateTopics) or by a stat."""
        self._configs[metadata.name] = self._build_config(metadata.name)
        for partition in partitions:
            name = f"{metadata.name}-{partition}"
            if name in present if present is not None else os.path.lexists(os.path.join(self.data_dir, name)):
                log.warning("moving aside stale %s before creating the partition", os.path.join(self.data_dir, name))
                remove_dir(self._partition_dir(metadata.name, partition))

    def _open_new(self, topic: str, partition: int) -> PartitionLog:
        """The PartitionLog of a partition that has no directory yet (not in _logs)."""
        partition_log = self._logs[(topic, partition)] = PartitionLog(
            self._partition_dir(topic, partition), self._configs[topic], clock=self.clock, lazy=True,
            on_roll=self._rolled, fresh=True,
        )
        if self._on_append is not None:
            partition_log.on_append = partial(self._on_append, topic, partition)
        return partition_log

    def set_append_hook(self, on_append: Callable[[str, int], None]) -> None:
        """`on_append(topic, partition)` after each append to a partition log, open now or later
        (the broker's replica fetchers look at it, as a leader's append completes Kafka's delayed
        follower fetches)."""
        self._on_append = on_append
        for (topic, partition), partition_log in list(self._logs.items()):
            partition_log.on_append = partial(on_append, topic, partition)

    def ensure_topic(self, name: str, partitions: int, configs: Mapping[str, str]) -> TopicMetadata:
        """The topic, created first with `partitions` and `configs` if it does not exist (an
        internal topic at start-up). An existing topic keeps its partition count even if the
        setting changed since: moving keys between partitions would lose their records."""
        existing = self.topics.get(name)
        if existing is not None:
            return existing
        try:
            created = self.create_topic(name, partitions, configs)
        except TopicAlreadyExists:
            return self.topics[name]
        log.info("created %s with %d partitions", name, partitions)
        return created

    def create_partitions(self, name: str, total: int) -> TopicMetadata:
        """CreatePartitions: grow the topic to `total` partitions."""
        metadata = self.topic(name)
        if total <= metadata.partitions:
            raise InvalidPartitions(f"topic {name} has {metadata.partitions} partitions, cannot go to {total}")
        grown = TopicMetadata(name, metadata.topic_id, total, dict(metadata.configs))
        if self._journal is not None:
            self._journal([TopicChange("grown", grown, old_partitions=metadata.partitions)])
            return metadata
        self._write_metadata(grown)
        return self.apply_grown(name, total)

    def apply_grown(self, name: str, total: int) -> TopicMetadata:
        """A topic grown to `total` partitions (made durable): the new ones exist from now on."""
        metadata = self.topics[name]
        old = min(metadata.partitions, total)
        metadata.partitions = total
        self.generation += 1
        self._open_partitions(metadata, range(old, total))
        return metadata

    def drop_replica(self, name: str, partition: int) -> None:
        """This broker no longer holds a replica of the partition (a simulated cluster moved it):
        its directory goes, and the partition is unopened again."""
        partition_log = self._logs.pop((name, partition), None)
        if partition_log is not None:
            partition_log.delete()
        elif os.path.lexists(self._partition_dir(name, partition)):
            remove_dir(self._partition_dir(name, partition))

    def delete_topic(self, name: str, *, remove: bool = True) -> list[Path]:
        """Drop the topic's metadata, then its partition directories (remove=False: renamed
        aside and returned, for `remove_dirs` in a worker thread)."""
        return self.delete_topics([name], remove=remove)

    def delete_topics(self, names: list[str], *, remove: bool = True) -> list[Path]:
        """delete_topic for several topics, made durable together (DeleteTopics: with a
        journal, one batch of records for the whole request). Raises UnknownTopic before
        anything changes, and what the journal raises (then none is deleted)."""
        topics = [self.topic(name) for name in dict.fromkeys(names)]
        if self._journal is None:
            return [path for metadata in topics for path in self.apply_deleted(metadata, remove=remove)]
        doomed = self._journal([TopicChange("deleted", metadata) for metadata in topics]) if topics else []
        if remove:
            remove_dirs(doomed)
            return []
        return doomed

    def apply_deleted(self, metadata: TopicMetadata, *, remove: bool = False) -> list[Path]:
        """A topic deleted (made durable) goes; its partition directories renamed aside are returned."""
        name = metadata.name
        if metadata.topic_id in self._in_created_log:
            self._in_created_log.discard(metadata.topic_id)
            log_deleted(self.data_dir, [str(metadata.topic_id)])
        # A topic whose line is still being written has no file: synced() logs its deletion.
        self._metadata_path(metadata).unlink(missing_ok=True)
        del self.topics[name]
        self._configs.pop(name, None)
        self.generation += 1
        doomed = []
        for partition in range(metadata.partitions):
            partition_log = self._logs.pop((name, partition), None)
            if partition_log is not None:
                renamed = partition_log.delete(remove=remove)
                if renamed is not None:
                    doomed.append(renamed)
        log.info("deleted topic %s (%s)", name, metadata.topic_id)
        return doomed

    # --- configs --------------------------------------------------------------------------

    def log_config(self, name: str) -> LogConfig:
        """The topic's config in force (kept per topic, rebuilt when its overrides or the
        broker's defaults change). Raises UnknownTopic."""
        self.topic(name)
        return self._configs[name]

    def _build_config(self, name: str) -> LogConfig:
        """The topic's LogConfig, shared by every topic with the same overrides (a LogConfig is
        immutable, and holds every setting: 500 topics alike would hold 500 copies)."""
        overrides = self.topic(name).configs
        key = tuple(sorted(overrides.items()))
        config = self._shared_configs.get(key)
        if config is None:
            if len(self._shared_configs) >= 256:
                self._shared_configs.clear()
            config = self._shared_configs[key] = LogConfig.of(self.topic_defaults, overrides)
        return config

    def set_topic_defaults(self, broker_config: Mapping[str, str]) -> None:
        """New topic-config defaults from the broker's `log.*` settings in force (a dynamic
        broker config changed): every partition log reads its config again. Raises InvalidConfig."""
        defaults = topic_defaults_from_broker(broker_config)
        if defaults == self.topic_defaults:
            return
        self.topic_defaults = defaults
        self._shared_configs.clear()
        for name, metadata in self.topics.items():
            self._update_config(name, metadata)

    def set_topic_config(self, name: str, overrides: Mapping[str, str]) -> TopicMetadata:
        """Replace the topic's overrides (AlterConfigs semantics; IncrementalAlterConfigs
        computes the new full set first). Raises InvalidConfig."""
        metadata = self.topic(name)
        validate_topic_config(overrides)
        configured = TopicMetadata(name, metadata.topic_id, metadata.partitions, {k: str(v) for k, v in overrides.items()})
        if self._journal is not None:
            self._journal([TopicChange("configured", configured, old_configs=dict(metadata.configs))])
            return metadata
        self._write_metadata(configured)
        return self.apply_configured(name, configured.configs)

    def apply_configured(self, name: str, configs: Mapping[str, str]) -> TopicMetadata:
        """A topic's overrides replaced (made durable): its partition logs read their config again."""
        metadata = self.topics[name]
        metadata.configs = dict(configs)
        self._update_config(name, metadata)
        return metadata

    def _update_config(self, name: str, metadata: TopicMetadata) -> None:
        config = self._configs[name] = self._build_config(name)
        for partition in range(metadata.partitions):
            partition_log = self._logs.get((name, partition))
            if partition_log is not None:
                partition_log.update_config(config)

    # --- logs -----------------------------------------------------------------------------

    def log(self, topic: str, partition: int) -> PartitionLog:
        partition_log = self._logs.get((topic, partition))
        if partition_log is not None:
            return partition_log
        if self._lock_fd is None:  # closed: a stopped broker's task one step late opens nothing
            raise LogClosed(f"{self.data_dir}: the logs are closed")
        metadata = self.topics.get(topic)
        if metadata is None or not 0 <= partition < metadata.partitions:
            raise UnknownTopic(f"unknown topic-partition {topic}-{partition}")
        return self._open_new(topic, partition)

    def logs(self) -> Iterator[tuple[str, int, PartitionLog]]:
        """Every partition, each opened if it was not yet (what reports of all partitions need)."""
        for topic, metadata in list(self.topics.items()):
            for partition in range(metadata.partitions):
                if self.topics.get(topic) is not metadata or partition >= metadata.partitions:
                    break  # deleted (or replaced) meanwhile
                yield topic, partition, self.log(topic, partition)

    def opened_logs(self) -> Iterator[tuple[str, int, PartitionLog]]:
        """The partitions opened so far: retention, cleaning and flushing have nothing to do for
        one that was never written, and do not open it."""
        for (topic, partition), partition_log in list(self._logs.items()):
            yield topic, partition, partition_log

    def logs_with_flush_policy(self) -> Iterator[tuple[str, int, PartitionLog]]:
        """The partition logs of topics that ask for fsyncs by count or time (flush.messages or
        flush.ms below Long.MAX): the only ones the flush scheduler can find due. One look per
        topic, not per partition: with Kafka's defaults a pass over 15,000 partitions costs
        nothing."""
        for name, metadata in list(self.topics.items()):
            config = self._configs.get(name)
            if config is None or (config.flush_ms >= LONG_MAX and config.flush_messages >= LONG_MAX):
                continue
            for partition in range(metadata.partitions):
                partition_log = self._logs.get((name, partition))
                if partition_log is not None:
                    yield name, partition, partition_log

    def flush(self) -> None:
        for _, _, partition_log in self.opened_logs():
            partition_log.flush()

    def close(self, clean: bool = True) -> None:
        """Close every log; `clean=False` leaves them as a killed process would (see abandon).

        A clean close, as Kafka's: each written partition is fsynced and its producer state
        snapshotted (by _CLOSE_THREADS threads), then one recovery-point and one
        log-start-offset checkpoint are written for the whole directory, then the
        clean-shutdown marker. A partition whose close failed is left out of the checkpoints,
        so the next start recovers it; without the marker it recovers every partition."""
        if self._lock_fd is None:
            return  # closed already
        logs = list(self._logs.items())
        if clean:
            states: dict[tuple[str, int], CleanState | None] = {}
            written = []
            for key, log_ in logs:
                if log_.deferred:  # never read since the start: nothing to flush, same state
                    states[key] = log_.close_for_checkpoint()
                elif log_.untouched and not log_.log_start_offset:
                    log_.close()
                else:
                    written.append((key, log_))
            if written:
                with ThreadPoolExecutor(max_workers=min(_CLOSE_THREADS, len(written)),
                                        thread_name_prefix="trafka-close") as pool:
                    states.update(zip((key for key, _ in written),
                                      pool.map(lambda item: item[1].close_for_checkpoint(), written)))
            write_clean_shutdown(self.data_dir, {key: state for key, state in states.items() if state is not None})
            self._fold_created_log()
        else:
            for _, partition_log in logs:
                partition_log.abandon()
        self._logs.clear()
        os.close(self._lock_fd)  # not None: a closed manager returned above
        self._lock_fd = None

    def _fold_created_log(self) -> None:
        """A clean close gives each topic created.log holds its own file (topic_store.fold_created_log)."""
        held = [metadata for metadata in self.topics.values() if metadata.topic_id in self._in_created_log]
        if fold_created_log(self.data_dir, held, bool(self._in_created_log)):
            self._in_created_log.clear()

