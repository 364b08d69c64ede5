"""The topics of a data dir as the offline CLI reads them (`trafka describe`, `groups`,
`share-groups`, `transactions`): from the metadata log on disk, never locked or recovered, so it
works beside a running broker."""

from __future__ import annotations

from pathlib import Path

from trafka.broker.metadata.image import read_image
from trafka.broker.metadata.topics import topics_of
from trafka.storage.metadata_log import metadata_log_dir
from trafka.storage.topic_store import TOPICS_DIR, TopicMetadata, read_topics


def metadata_home(data_dir: Path) -> Path | None:
    """The directory whose `metadata/` holds the log a data dir's topics are in: the data dir
    itself, or for a simulated cluster's node (`broker-<id>/`) the cluster's; None if neither."""
    for home in (data_dir, data_dir.parent):
        if metadata_log_dir(home).is_dir():
            return home
    return None


def is_data_dir(data_dir: Path) -> bool:
    return metadata_home(data_dir) is not None or (data_dir / TOPICS_DIR).is_dir()


def offline_topics(data_dir: Path) -> list[TopicMetadata]:
    """The topics of a data dir for the offline tools (`trafka describe`, consumer groups, share
    groups): the metadata log's, read without locking or recovering it (a broker may run), and
    those of a `topics/` an older trafka left that no start has imported yet."""
    data_dir = Path(data_dir)
    home = metadata_home(data_dir)
    topics = topics_of(read_image(home)) if home is not None else []
    if (data_dir / TOPICS_DIR).is_dir():
        ids, names = {m.topic_id for m in topics}, {m.name for m in topics}
        topics += [m for m in read_topics(data_dir).topics if m.topic_id not in ids and m.name not in names]
    return topics
