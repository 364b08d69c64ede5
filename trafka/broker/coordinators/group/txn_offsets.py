"""Offsets committed inside transactions (TxnOffsetCommit), held until the transaction ends.

Kafka's GroupMetadata.pendingTransactionalOffsetCommits: per producer id, the offsets its open
transaction committed for each group. They are written to `__consumer_offsets` at once, as a
transactional batch of the producer, but OffsetFetch sees them only once the transaction
coordinator writes the COMMIT marker to that partition (`complete`); an ABORT drops them.
While any are pending for a partition, OffsetFetch with require_stable answers
UNSTABLE_OFFSET_COMMIT for it.
"""

from __future__ import annotations

import logging

from trafka.broker.coordinators.group import formats
from trafka.broker.coordinators.group.formats import CommittedOffset, OffsetKey
from trafka.broker.coordinators.group.group import Group
from trafka.broker.requests.errors import coordinator_write_error
from trafka.broker.coordinators.runtime.records import CoordinatorRecord
from trafka.broker.coordinators.runtime.runtime import CoordinatorWriteError
from trafka.storage import errors as storage_errors
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.coordinator")


class PendingTxnOffsets:
    def __init__(self) -> None:
        # producer id -> group -> (topic, partition) -> offset
        self.by_producer: dict[int, dict[str, dict[tuple[str, int], CommittedOffset]]] = {}

    def add(self, producer_id: int, group_id: str, offsets: dict[tuple[str, int], CommittedOffset]) -> None:
        self.by_producer.setdefault(producer_id, {}).setdefault(group_id, {}).update(offsets)

    def is_pending(self, group_id: str, topic: str, partition: int) -> bool:
        return any((topic, partition) in groups.get(group_id, {}) for groups in self.by_producer.values())

    def take(self, producer_id: int, groups_in_partition) -> dict[str, dict[tuple[str, int], CommittedOffset]]:
        """Remove and return the producer's pending offsets of the groups that
        `groups_in_partition(group_id)` says live in the marker's partition."""
        groups = self.by_producer.get(producer_id, {})
        taken = {g: groups.pop(g) for g in [g for g in groups if groups_in_partition(g)]}
        if not groups:
            self.by_producer.pop(producer_id, None)
        return taken


def txn_commit_offsets(
    coordinator, group_id: str, producer_id: int, producer_epoch: int, generation: int, member_id: str,
    group_instance_id: str | None, commits: list,
) -> list[ErrorCode]:
    """TxnOffsetCommit: written now as the producer's transactional batch, visible to
    OffsetFetch once the transaction commits (see txn_offsets)."""
    now = coordinator.now()
    group = coordinator.groups.get(group_id)
    consumer_group = coordinator.consumer_groups.get(group_id)
    if consumer_group is not None:
        # Kafka's validateTransactionalOffsetCommit: a stale member epoch is ILLEGAL_GENERATION here.
        error = consumer_group.validate_offset_commit(member_id, generation)
        if error:
            return [ErrorCode.ILLEGAL_GENERATION if error == ErrorCode.STALE_MEMBER_EPOCH else error] * len(commits)
    elif group is not None and (generation >= 0 or member_id or group_instance_id is not None):
        error = coordinator.offsets._validate_commit(group, generation, member_id, group_instance_id)
        if error and error != ErrorCode.REBALANCE_IN_PROGRESS:
            return [error] * len(commits)
    errors = [coordinator.offsets._check_commit(c) for c in commits]
    values = {
        (c.topic, c.partition): CommittedOffset(c.offset, c.leader_epoch, c.metadata or "", now)
        for c, e in zip(commits, errors) if e == ErrorCode.NONE
    }
    if not values:
        return errors
    records = [
        CoordinatorRecord(formats.offset_key(OffsetKey(group_id, topic, partition)), formats.offset_value(value))
        for (topic, partition), value in values.items()
    ]
    shard = coordinator.shard_for(group_id)
    try:
        coordinator.write(group_id, records, apply=lambda: shard.pending_txn_offsets.add(producer_id, group_id, values),
                          producer_id=producer_id, producer_epoch=producer_epoch)
    except CoordinatorWriteError as exc:
        log.error("group %s: cannot write transactional offsets: %s", group_id, exc.cause)
        if isinstance(exc.cause, storage_errors.InvalidProducerEpoch):
            failed = ErrorCode.PRODUCER_FENCED
        else:
            failed = coordinator_write_error(exc.cause, offsets=True)
        return [failed if e == ErrorCode.NONE else e for e in errors]
    return errors


def complete_txn(coordinator, partition: int, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int) -> None:
    """The transaction coordinator's marker for a `__consumer_offsets` partition: write it,
    then make the producer's pending offsets of the groups there visible (or drop them).
    Raises CoordinatorWriteError (nothing changed) when the marker cannot be written."""
    def apply(shard) -> None:
        taken = shard.pending_txn_offsets.take(producer_id, lambda g: True)
        if commit:
            now = coordinator.now()
            for group_id, offsets in taken.items():
                group = coordinator.offsets_group(group_id)
                if group is None:
                    group = coordinator.groups[group_id] = Group(group_id, now)
                group.offsets.update(offsets)
    coordinator.runtime.write_marker(partition, producer_id, producer_epoch, commit, coordinator_epoch, apply)
