"""What AlterShareGroupOffsets and DeleteShareGroupOffsets share (KIP-932's admin calls on a
share group's start offsets): only an empty share group's offsets change, as in Kafka."""

from __future__ import annotations

from trafka.broker.security.authorizer import TOPIC, Op, authorize
from trafka.storage.errors import StorageError
from trafka.wire.errors import ErrorCode
from trafka.wire.types import ZERO_UUID


def group_refusal(broker, group_id: str) -> tuple[ErrorCode, str | None]:
    """NON_EMPTY_GROUP while the share group has members; GROUP_ID_NOT_FOUND for a group of
    another type; NONE for an empty or unknown share group (its offsets may be set ahead of its
    first member, as Kafka allows)."""
    group = broker.group_coordinator.group(group_id)
    if group is None:
        return ErrorCode.NONE, None
    if group.group_type != "share":
        return ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group."
    if group.members:
        return ErrorCode.NON_EMPTY_GROUP, f"The share group {group_id} has members: its offsets can change only while it is empty."
    return ErrorCode.NONE, None


def topic(ctx, name: str):
    """(topic or None, error): TOPIC_AUTHORIZATION_FAILED without READ, then
    UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist."""
    if not authorize(ctx, Op.READ, TOPIC, name):
        return None, ErrorCode.TOPIC_AUTHORIZATION_FAILED
    try:
        return ctx.broker.logs.topic(name), ErrorCode.NONE
    except StorageError:
        return None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def topic_id(found) -> object:
    return found.topic_id if found is not None else ZERO_UUID
