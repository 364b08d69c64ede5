"""One flush of a partition, planned on the event loop and run in a worker thread
(broker/log_tasks.flush_off_loop): the segments that may hold data not yet fsynced, then the
recovery point moved to the log end offset taken when the plan was made."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trafka.storage.errors import LogClosed
from trafka.storage.log_loader import RECOVERY_POINT_FILE, read_checkpoint, write_checkpoint


@dataclass(frozen=True)
class FlushPlan:
    """One flush of a partition, safe in a worker thread while the loop appends: the segments
    that may hold data not yet fsynced (from the recovery point on, and the active one), then
    the recovery point moved to the log end offset taken when the plan was made."""

    directory: Path
    offset: int
    segments: list
    messages: int

    def run(self) -> None:
        self.sync_segments()
        write_checkpoint(self.directory / RECOVERY_POINT_FILE, self.offset)

    def sync_segments(self) -> None:
        recovery_point = read_checkpoint(self.directory / RECOVERY_POINT_FILE) or 0
        for segment in self.segments:
            if segment.next_offset > recovery_point or segment is self.segments[-1]:
                try:
                    segment.flush()
                except (LogClosed, OSError):
                    if segment.closed:
                        continue  # deleted by retention or compaction meanwhile: nothing to keep
                    raise



