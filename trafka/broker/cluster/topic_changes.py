"""A node's topics brought in line with the others' (a simulated cluster, docs/cluster-design.md):
at its start, from a running node (`catch_up`), and as each change is made on another node
(`apply_topic_change`, from the Cluster's mirror)."""

from __future__ import annotations

import logging

from trafka.storage.errors import StorageError

log = logging.getLogger("trafka.broker")


def catch_up(target, reference) -> None:
    """`target` (a node's LogManager) takes the topics of `reference` (a running node's): ones
    deleted meanwhile go, new ones come with the same ids, grown and reconfigured ones follow."""
    for name, metadata in list(target.topics.items()):
        ref = reference.topics.get(name)
        if ref is None or ref.topic_id != metadata.topic_id:
            log.info("node %s: dropping topic %s, deleted while it was down", target.data_dir.name, name)
            target.delete_topic(name)
    for name, ref in reference.topics.items():
        metadata = target.topics.get(name)
        if metadata is None:
            target.create_topic(name, ref.partitions, ref.configs, topic_id=ref.topic_id)
            continue
        if metadata.partitions < ref.partitions:
            target.create_partitions(name, ref.partitions)
        if metadata.configs != ref.configs:
            target.set_topic_config(name, ref.configs)


def apply_topic_change(logs, change: str, metadata) -> None:
    """One topic change made on another node (created, deleted, grown, configured) applied to
    `logs`; a storage error is logged and leaves this node's copy out of line until it starts
    again."""
    name = metadata.name
    try:
        if change == "created":
            logs.create_topic(name, metadata.partitions, metadata.configs, topic_id=metadata.topic_id)
        elif change == "deleted":
            if name in logs.topics:
                logs.delete_topic(name)
        elif change == "grown":
            logs.create_partitions(name, metadata.partitions)
        elif change == "configured":
            logs.set_topic_config(name, metadata.configs)
    except StorageError as exc:
        # The node's copy is out of line until it restarts (joined() catches it up).
        log.error("node %s: cannot apply topic %s being %s: %s", logs.data_dir.name, name, change, exc)
