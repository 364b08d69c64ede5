"""An internal topic read from a data directory's segment files, read-only and without its
lock, so it works beside a running broker (`trafka groups`, `trafka transactions`). A batch
being written at that moment is cut off at the end of the active segment and left out.

The broker itself never reads this way: its shards replay through `InternalTopic.replay`.
Both walk batches with the same `committed_records`."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from trafka.broker.coordinators.runtime.internal_topic import LoggedRecord, committed_records
from trafka.storage.inspect import replay_topic


def read_topic(data_dir: Path, topic: str) -> Iterator[LoggedRecord]:
    """Every committed record of every partition of `topic`, partition by partition, in log order."""
    pending_by_partition: dict[int, dict] = {}
    return replay_topic(Path(data_dir), topic, lambda data, offset, partition: committed_records(
        data, offset, pending_by_partition.setdefault(partition, {}), topic, partition))
