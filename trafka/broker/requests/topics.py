"""Topic lookup and auto-creation shared by the handlers that may create topics."""

from __future__ import annotations

import logging

from trafka.storage.errors import InvalidTopic, StorageError, TopicAlreadyExists, UnknownTopic
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.broker")


def get_or_create_topic(broker, name: str, *, allow_auto_create: bool = True):
    """The topic called `name`, auto-created with num.partitions when Kafka would create it."""
    topic = broker.logs.topics.get(name)
    if topic is not None or not (allow_auto_create and broker.config["auto.create.topics.enable"]):
        return topic
    try:
        topic = broker.logs.create_topic(name, broker.config["num.partitions"], {})
    except TopicAlreadyExists:
        return broker.logs.topics.get(name)
    except InvalidTopic:
        return None
    except (StorageError, OSError) as exc:  # its records could not be written: not created
        log.error("cannot auto-create topic %s: %s", name, exc)
        return None
    log.info("auto-created topic %s with %d partitions", name, topic.partitions)
    return topic


def topic_name(broker, name: str, topic_id, *, by_id: bool) -> str | None:
    """The topic a request names: by name up to the versions that carry names, by topic id
    after (`by_id`: Fetch v13+, Produce v13+); None when no topic has that id."""
    if not by_id:
        return name
    try:
        return broker.logs.topic_by_id(topic_id).name
    except UnknownTopic:
        return None


def find_log(broker, topic: str, partition: int):
    """The partition's log, or None when the topic or partition does not exist."""
    try:
        return broker.logs.log(topic, partition)
    except UnknownTopic:
        return None


def led_elsewhere(broker, topic: str, partition: int) -> bool:
    """The partition exists and this broker does not lead it (the handler answers
    NOT_LEADER_OR_FOLLOWER, and the client asks Metadata who does). Only a question: the
    leader's role is on its log since the log opened or the leadership moved
    (trafka/broker/cluster/replication.py `opened`, `track`)."""
    metadata = broker.logs.topics.get(topic)
    if metadata is None or not 0 <= partition < metadata.partitions:
        return False
    return broker.cluster.controller.leader(metadata.topic_id, partition) != broker.node_id


def current_leader_epoch(broker, topic: str, partition: int) -> int:
    """The partition's leader epoch, the controller's (-1 for a partition that does not exist)."""
    metadata = broker.logs.topics.get(topic)
    if metadata is None or not 0 <= partition < metadata.partitions:
        return -1
    return broker.cluster.controller.leader_epoch(metadata.topic_id, partition)


def leader_epoch_error(broker, topic: str, partition: int, requested: int) -> ErrorCode | None:
    """Kafka's Partition.checkCurrentLeaderEpoch for a request's current_leader_epoch (-1: the
    client names none): FENCED_LEADER_EPOCH when the client's is older than the partition's
    (it must refresh its metadata), UNKNOWN_LEADER_EPOCH when newer (this broker has not heard
    of it yet); None when they agree. Kafka checks it before leadership."""
    if requested < 0:
        return None
    current = current_leader_epoch(broker, topic, partition)
    if current < 0 or requested == current:
        return None
    return ErrorCode.FENCED_LEADER_EPOCH if requested < current else ErrorCode.UNKNOWN_LEADER_EPOCH
