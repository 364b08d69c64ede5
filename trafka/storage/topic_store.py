"""Where the topics are kept on disk: `<data>/topics/`.

Kafka keeps topic ids, partition counts and config overrides in its metadata log. Here:
- Each topic has a small JSON file, `topics/<topic id>.json` (named by id: a 249-character topic
  name plus a suffix would not fit 255 bytes), written atomically: temporary file, fsync,
  rename, fsync of the directory. Every change to a topic (partitions, configs) rewrites it.
- The topics one CreateTopics request makes are written together as one line of
  `topics/created.log`: one append and one fsync for the whole request, as Kafka's controller
  writes one metadata record batch per request (500 files cost ~0.1 s of fsyncs, the line
  about a millisecond). A topic lives only in that log until a clean close writes its file, or
  a change to it does; a topic deleted before that gets a `deleted` line.

Reading (read_topics): the files, then the log's lines in order over them; a file always wins
over a line for the same topic id, since it is newer. A last line cut short by a crash is from a
request that was never answered: it is left out (the broker rewrites the log without it).
"""

from __future__ import annotations

import json
import logging
import os
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from trafka.storage.errors import InvalidTopic, StorageError
from trafka.storage.files import fsync_dir, write_all, write_temporary

log = logging.getLogger("trafka.storage")

TOPICS_DIR = "topics"
CREATED_LOG = "created.log"
STRAY_DIR_SUFFIX = "-stray"
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]+")
_PARTITION_DIR = re.compile(r"(.+)-(\d+)")


@dataclass
class TopicMetadata:
    name: str
    topic_id: uuid.UUID
    partitions: int
    configs: dict[str, str] = field(default_factory=dict)  # per-topic overrides only

    def to_dict(self) -> dict:
        return {"name": self.name, "topic_id": str(self.topic_id), "partitions": self.partitions, "configs": self.configs}

    def to_json(self) -> str:
        # One line, so the C encoder writes it (indent= falls back to the pure-Python one, a
        # tenth of a 500-topic CreateTopics); readers only ever parse it.
        return json.dumps(self.to_dict(), sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, body: dict) -> "TopicMetadata":
        return cls(body["name"], uuid.UUID(body["topic_id"]), int(body["partitions"]), dict(body["configs"]))

    @classmethod
    def from_json(cls, text: str) -> "TopicMetadata":
        return cls.from_dict(json.loads(text))


@dataclass
class TopicChange:
    """A change to a topic, as the LogManager tells its journal before making it: "created",
    "grown" (from `old_partitions`), "configured" (from `old_configs`) or "deleted"."""
    kind: str
    metadata: TopicMetadata  # as it is after the change
    old_partitions: int = 0
    old_configs: dict[str, str] | None = None


def metadata_path(data_dir: Path, topic_id: uuid.UUID) -> Path:
    return data_dir / TOPICS_DIR / f"{topic_id}.json"


def read_topic_metadata(path: Path) -> TopicMetadata:
    """A topic's metadata file, or a StorageError naming it. The broker refuses to start rather
    than guess: a topic loaded without its configs could be given a shorter retention."""
    try:
        return TopicMetadata.from_json(path.read_text())
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StorageError(
            f"{path}: unreadable topic metadata ({type(exc).__name__}: {exc}); fix or restore the file "
            "(the topic's partition directories are untouched)"
        ) from None


def topic_metadata_paths(data_dir: Path) -> list[Path]:
    """The topic metadata files of a data directory (topics/<topic id>.json), in name order."""
    return sorted((data_dir / TOPICS_DIR).glob("*.json"))


@dataclass
class StoredTopics:
    topics: list[TopicMetadata]  # the files' topics, then the log's, in the order they came
    in_log: set[uuid.UUID]  # the ids of topics created by a line of created.log (with a file or not)
    good_lines: list[str] | None  # created.log's whole lines, when a cut last line was left out


def read_topics(data_dir: Path) -> StoredTopics:
    """Every topic of a data directory: the metadata files, then created.log replayed over them.
    Raises StorageError for an unreadable file or a damaged line that is not the last."""
    by_id = {}
    for path in topic_metadata_paths(data_dir):
        metadata = read_topic_metadata(path)
        by_id[metadata.topic_id] = metadata
    in_log: dict[uuid.UUID, TopicMetadata] = {}
    path = data_dir / TOPICS_DIR / CREATED_LOG
    try:
        text = path.read_text()
    except FileNotFoundError:
        text = ""
    except OSError as exc:
        raise StorageError(f"{path}: unreadable ({exc.strerror or exc})") from None
    lines = text.split("\n")  # a complete log ends with "\n": the last piece is empty
    good_lines = None
    for number, line in enumerate(lines, 1):
        if not line:
            continue
        try:
            record = json.loads(line)
            if number == len(lines):
                raise ValueError("no line end")  # cut short: its request was never answered
            for body in record.get("created", ()):
                metadata = TopicMetadata.from_dict(body)
                in_log[metadata.topic_id] = metadata
            for topic_id in record.get("deleted", ()):
                in_log.pop(uuid.UUID(topic_id), None)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            if number < len(lines):  # a whole line, damaged: not something a crash does
                raise StorageError(
                    f"{path}: line {number} is damaged ({type(exc).__name__}: {exc}); fix or restore the file"
                ) from None
            log.warning("%s: leaving out its last line, cut short by a crash before it was answered", path)
            good_lines = [kept for kept in lines[:number - 1] if kept]
    topics = list(by_id.values())
    topics += [metadata for topic_id, metadata in in_log.items() if topic_id not in by_id]
    return StoredTopics(topics, set(in_log), good_lines)


def append_to_created_log(data_dir: Path, record: dict, *, fsync: bool = True) -> None:
    """One line appended to topics/created.log (fsynced, and its directory too when the file
    is new). A failed write is cut back, so the next line never follows a partial one."""
    path = data_dir / TOPICS_DIR / CREATED_LOG
    payload = (json.dumps(record, sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        size = os.fstat(fd).st_size
        try:
            write_all(fd, payload)
            if fsync:
                os.fsync(fd)
        except OSError:
            try:
                os.ftruncate(fd, size)
            except OSError:
                pass
            raise
    finally:
        os.close(fd)
    if fsync and size == 0:
        fsync_dir(path.parent)


def created_record(pending: list[TopicMetadata]) -> dict:
    return {"created": [metadata.to_dict() for metadata in pending]}


def write_metadata_files(data_dir: Path, topics: list[TopicMetadata]) -> None:
    """Each topic's metadata file written to a temporary file and fsynced by a pool of threads
    (the file system folds concurrent creations and fsyncs into few journal commits), then
    renamed into place, then the directory fsynced. Touches no shared state: safe in a worker
    thread. On an OSError the temporary files are removed and it is raised."""
    written: list[tuple[Path, Path]] = []  # (temporary, final)

    def write(metadata: TopicMetadata) -> None:
        path = metadata_path(data_dir, metadata.topic_id)
        written.append((write_temporary(path, metadata.to_json()), path))

    try:
        with ThreadPoolExecutor(max_workers=min(16, len(topics)), thread_name_prefix="trafka-fsync") as pool:
            list(pool.map(write, topics))
        for tmp, path in written:
            os.replace(tmp, path)
        fsync_dir(data_dir / TOPICS_DIR)
    except OSError:
        for leftover, _ in written:
            try:
                leftover.unlink(missing_ok=True)
            except OSError:
                pass
        raise


# --- names ------------------------------------------------------------------------------------

def validate_topic_name(name: str) -> None:
    """Kafka's Topic.validate."""
    if not name:
        raise InvalidTopic("topic name is empty")
    if name in (".", ".."):
        raise InvalidTopic(f"topic name cannot be {name!r}")
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise InvalidTopic(f"topic name is longer than {MAX_TOPIC_NAME_LENGTH} characters")
    if not _LEGAL_TOPIC_NAME.fullmatch(name):
        raise InvalidTopic(f"topic name {name!r} has characters outside [a-zA-Z0-9._-]")


def _collision_key(name: str) -> str:
    # Metric names map '.' to '_', so Kafka refuses topics that differ only there.
    return name.replace(".", "_")


def partition_dir(data_dir: Path, topic: str, partition: int) -> Path:
    return data_dir / f"{topic}-{partition}"


def parse_partition_dir(name: str) -> tuple[str, int] | None:
    """(topic, partition) of a partition directory's name; None for any other name."""
    match = _PARTITION_DIR.fullmatch(name)
    return (match[1], int(match[2])) if match else None


# --- the data dir's topic files ---------------------------------------------------------------

def move_aside_stray(data_dir: Path, name: str) -> Path:
    """A stray log (Kafka's word: a partition directory whose topic or partition the metadata
    log does not have: deleted, or never made durable) is renamed `<dir>.<id>-stray`, as Kafka
    moves it aside, and never read again; the operator removes it."""
    stray = data_dir / f"{name}.{uuid.uuid4().hex}{STRAY_DIR_SUFFIX}"
    log.warning("moving aside %s as %s: the metadata log has no topic %s with that partition",
                data_dir / name, stray.name, name.rpartition("-")[0])
    os.replace(data_dir / name, stray)
    fsync_dir(data_dir)
    return stray


def fold_created_log(data_dir: Path, held: list[TopicMetadata], any_held: bool) -> bool:
    """A clean close gives each topic created.log holds (`held`) its own file, then removes the
    log (the next start reads files only). On failure the log stays, and stays right: a file
    wins over a line for the same topic. Whether it was folded."""
    path = data_dir / TOPICS_DIR / CREATED_LOG
    if not any_held and not path.exists():
        return True
    try:
        if held:
            write_metadata_files(data_dir, held)
        path.unlink(missing_ok=True)
        fsync_dir(path.parent)
    except OSError as exc:
        log.error("%s: cannot give its topics their own files (%s); it is read again at the next start",
                  path, exc.strerror or exc)
        return False
    return True


def log_deleted(data_dir: Path, topic_ids: list[str]) -> None:
    """A `deleted` line of created.log. Not fsynced, as the unlink of a topic's file is not:
    DeleteTopics is durable once the partition directories' removal is (the next fsync of the
    topics directory or log)."""
    try:
        append_to_created_log(data_dir, {"deleted": topic_ids}, fsync=False)
    except OSError as exc:
        log.error("%s: cannot record the deletion of topics %s (%s); they return at the next start",
                  data_dir / TOPICS_DIR / CREATED_LOG, ", ".join(topic_ids), exc.strerror or exc)
