"""The data directory's offsets checkpoint files, in Kafka's format (its OffsetCheckpointFile):
a version line, a count line, then one `topic partition offset` line per partition.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import logging

from trafka.storage.files import atomic_write, fsync_dir
from trafka.storage.log import CLEAN_SHUTDOWN_FILE, CleanState

log = logging.getLogger("trafka.storage")

# Written by a clean close for the whole data directory (Kafka's per-log-dir files), then the
# clean-shutdown marker beside them; read at the next open only if that marker is there.
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
_CHECKPOINT_VERSION = 0


def write_offsets_checkpoint(path: Path, offsets: Mapping[tuple[str, int], int]) -> None:
    """A per-directory offsets checkpoint: a version line, a count line, then one
    `topic partition offset` line per partition (Kafka's format), replaced atomically."""
    lines = [str(_CHECKPOINT_VERSION), str(len(offsets))]
    lines += [f"{topic} {partition} {offset}" for (topic, partition), offset in sorted(offsets.items())]
    atomic_write(path, "\n".join(lines) + "\n")


def read_offsets_checkpoint(path: Path) -> dict[tuple[str, int], int]:
    """Raises OSError or ValueError for a missing or malformed file."""
    lines = path.read_text().splitlines()
    if len(lines) < 2 or int(lines[0]) != _CHECKPOINT_VERSION or int(lines[1]) != len(lines) - 2:
        raise ValueError(f"{path}: not a version {_CHECKPOINT_VERSION} checkpoint of {len(lines) - 2} entries")
    offsets = {}
    for line in lines[2:]:
        topic, partition, offset = line.split(" ")
        offsets[(topic, int(partition))] = int(offset)
    return offsets


def read_clean_shutdown(data_dir: Path) -> dict[tuple[str, int], CleanState]:
    """The partitions the last close left cleanly (empty without the clean-shutdown marker:
    every partition then recovers from its own recovery-point file)."""
    if not (data_dir / CLEAN_SHUTDOWN_FILE).exists():
        return {}
    try:
        recovery = read_offsets_checkpoint(data_dir / RECOVERY_POINT_CHECKPOINT)
        starts = read_offsets_checkpoint(data_dir / LOG_START_OFFSET_CHECKPOINT)
    except (OSError, ValueError) as exc:
        log.warning("%s: unreadable checkpoint after a clean shutdown (%s); recovering every partition", data_dir, exc)
        return {}
    return {key: CleanState(point, starts[key]) for key, point in recovery.items() if key in starts}


def write_clean_shutdown(data_dir: Path, states: Mapping[tuple[str, int], CleanState]) -> None:
    """A clean close's checkpoints for the whole directory, then the clean-shutdown marker."""
    try:
        write_offsets_checkpoint(data_dir / RECOVERY_POINT_CHECKPOINT, {key: s.recovery_point for key, s in states.items()})
        write_offsets_checkpoint(data_dir / LOG_START_OFFSET_CHECKPOINT, {key: s.log_start_offset for key, s in states.items()})
        (data_dir / CLEAN_SHUTDOWN_FILE).touch()
        fsync_dir(data_dir)
    except OSError as exc:
        log.error("%s: cannot mark a clean shutdown (%s); the next start recovers every partition",
                  data_dir, exc.strerror or exc)
