"""Committed offsets: OffsetCommit, OffsetFetch, OffsetDelete, expiry and deleted topics.

Kafka's OffsetMetadataManager, scaled down: the offsets live on each group (`Group.offsets`) and
every change is first written to `__consumer_offsets` as Kafka's OffsetCommit key/value records.
Offsets committed inside transactions are held apart in `txn_offsets` until their transaction
ends. Which member may commit is asked of the group (`validate_member`, its generation and state).

A KIP-848 consumer group (`ConsumerGroup.offsets`) keeps its offsets the same way, in the same
records; its members commit with their member epoch in the generation field (OffsetCommit v9+)
and are checked as Kafka's ConsumerGroup does: UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH, and
UNSUPPORTED_VERSION for a member committing with v8 or older.

`OffsetMetadataManager` is one part of the `GroupCoordinator` (context.py). Every change is
written through the coordinator (`GroupCoordinator.write`, the coordinator runtime) and applied
from the records written, by the shard's replay, once they are in the log.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from trafka.broker.coordinators.group import formats, txn_offsets
from trafka.broker.coordinators.group.context import CoordinatorPart
from trafka.broker.coordinators.group.formats import CommittedOffset, OffsetKey
from trafka.broker.coordinators.group.group import Group, GroupState
from trafka.broker.requests.errors import coordinator_write_error
from trafka.broker.coordinators.runtime.records import CoordinatorRecord
from trafka.broker.coordinators.runtime.runtime import CoordinatorWriteError
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.coordinator")

EMPTY, COMPLETING, DEAD = GroupState.EMPTY, GroupState.COMPLETING_REBALANCE, GroupState.DEAD
STABLE, PREPARING = GroupState.STABLE, GroupState.PREPARING_REBALANCE

OFFSET_METADATA_MAX_BYTES = 4096  # Kafka's offset.metadata.max.bytes default


@dataclass
class OffsetCommit:
    topic: str
    partition: int
    offset: int
    leader_epoch: int
    metadata: str | None


class OffsetMetadataManager(CoordinatorPart):
    # --- committed offsets ----------------------------------------------------------------

    def commit_offsets(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        group_instance_id: str | None,
        commits: list[OffsetCommit],
        *,
        api_version: int = 8,
    ) -> list[ErrorCode]:
        """One error per commit, in order. As in Kafka, an unknown topic or partition is
        UNKNOWN_TOPIC_OR_PARTITION before the group is looked at; then the group's checks. From
        OffsetCommit v9 on, a commit with a generation (or member epoch) to a group that does
        not exist is GROUP_ID_NOT_FOUND, as in Kafka; older versions keep ILLEGAL_GENERATION."""
        unknown = [not self.partition_exists(c.topic, c.partition) for c in commits]
        if all(unknown):
            return [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION] * len(commits)

        def refused(error: ErrorCode) -> list[ErrorCode]:
            return [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if u else error for u in unknown]

        now = self._now()
        consumer_group = self.consumer_groups.get(group_id)
        group = consumer_group if consumer_group is not None else self.groups.get(group_id)
        if group is None:
            if generation >= 0:
                return refused(ErrorCode.GROUP_ID_NOT_FOUND if api_version >= 9 else ErrorCode.ILLEGAL_GENERATION)
            # A consumer without group membership (manual assignment) keeps offsets here too,
            # whatever member id it sends (librdkafka with group.protocol=consumer sends its own).
            group = Group(group_id, now)
        if consumer_group is not None:
            error = self._validate_consumer_commit(consumer_group, generation, member_id, api_version)
        else:
            error = self._validate_commit(group, generation, member_id, group_instance_id)
        if error:
            return refused(error)
        member = group.members.get(member_id) if consumer_group is None else None
        if member is not None and group.is_(STABLE, PREPARING):
            # As Kafka's commitOffset: a classic member's valid commit keeps it alive, whatever
            # becomes of its offsets (a refused partition, a write that fails).
            member.heartbeat_deadline = now + member.session_timeout_ms
        errors = [self._check_commit(c) for c in commits]
        accepted = [c for c, e in zip(commits, errors) if e == ErrorCode.NONE]
        if not accepted:
            return errors
        values = {
            (c.topic, c.partition): CommittedOffset(c.offset, c.leader_epoch, c.metadata or "", now) for c in accepted
        }
        records = [
            CoordinatorRecord(formats.offset_key(OffsetKey(group_id, topic, partition)), formats.offset_value(value))
            for (topic, partition), value in values.items()
        ]

        def apply() -> None:
            shard = self.coordinator.shard_for(group_id)
            for record in records:
                shard.replay(record.key, record.value)
        try:
            self.coordinator.write(group_id, records, apply=apply)
        except CoordinatorWriteError as exc:
            log.error("group %s: cannot write committed offsets: %s", group_id, exc.cause)
            failed = coordinator_write_error(exc.cause, offsets=True)
            return [failed if e == ErrorCode.NONE else e for e in errors]
        return errors

    @staticmethod
    def _validate_consumer_commit(group, member_epoch: int, member_id: str, api_version: int) -> ErrorCode:
        """Kafka's ConsumerGroup.validateOffsetCommit: a commit without an epoch is accepted
        while the group has no members; an unknown member is UNKNOWN_MEMBER_ID; a member must
        commit with OffsetCommit v9+ (UNSUPPORTED_VERSION) and its current epoch
        (STALE_MEMBER_EPOCH)."""
        error = group.validate_offset_commit(member_id, member_epoch)
        if error == ErrorCode.UNKNOWN_MEMBER_ID or (member_epoch < 0 and not group.members):
            return error
        if group.members[member_id].uses_classic_protocol:
            return error  # a classic member of a migrated group commits as in a classic group
        if api_version < 9:
            return ErrorCode.UNSUPPORTED_VERSION
        return error

    @staticmethod
    def _validate_commit(group: Group, generation: int, member_id: str, group_instance_id: str | None) -> ErrorCode:
        """Kafka's validateOffsetCommit, then its rule for commits during CompletingRebalance."""
        if group.is_(DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if generation < 0 and group.is_(EMPTY):
            return ErrorCode.NONE  # an admin client, or a consumer without group management
        if generation >= 0 or member_id or group_instance_id is not None:
            error = group.validate_member(member_id, group_instance_id)
            if error:
                return error
            if generation != group.generation:
                return ErrorCode.ILLEGAL_GENERATION
        elif not group.is_(EMPTY):
            return ErrorCode.UNKNOWN_MEMBER_ID  # only members commit for a group that has some
        if group.is_(COMPLETING):
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def txn_commit_offsets(self, group_id: str, producer_id: int, producer_epoch: int, generation: int,
                           member_id: str, group_instance_id: str | None, commits: list[OffsetCommit]) -> list[ErrorCode]:
        return txn_offsets.txn_commit_offsets(
            self.coordinator, group_id, producer_id, producer_epoch, generation, member_id, group_instance_id, commits
        )

    def complete_txn(self, partition: int, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int) -> None:
        txn_offsets.complete_txn(self.coordinator, partition, producer_id, producer_epoch, commit, coordinator_epoch)

    def has_pending_txn_offset(self, group_id: str, topic: str, partition: int) -> bool:
        return self.coordinator.shard_for(group_id).pending_txn_offsets.is_pending(group_id, topic, partition)

    def _check_commit(self, commit: OffsetCommit) -> ErrorCode:
        if not self.partition_exists(commit.topic, commit.partition):
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if commit.metadata is not None and len(commit.metadata.encode("utf-8")) > OFFSET_METADATA_MAX_BYTES:
            return ErrorCode.OFFSET_METADATA_TOO_LARGE
        return ErrorCode.NONE

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        """Kafka's validateOffsetFetch (OffsetFetch v9): classic groups accept every fetch; a
        consumer group accepts one without member id and epoch (admin clients), else only from
        a member (UNKNOWN_MEMBER_ID) at its current epoch (STALE_MEMBER_EPOCH)."""
        group = self.consumer_groups.get(group_id)
        if group is None or (member_id is None and member_epoch < 0):
            return ErrorCode.NONE
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member.member_epoch != member_epoch:
            return ErrorCode.STALE_MEMBER_EPOCH
        return ErrorCode.NONE

    def offsets_group(self, group_id: str):
        """The group that keeps `group_id`'s committed offsets: its consumer group (KIP-848),
        else its classic group; None when there is neither."""
        group = self.consumer_groups.get(group_id)
        return group if group is not None else self.groups.get(group_id)

    def fetch_offsets(
        self, group_id: str, wanted: list[tuple[str, list[int]]] | None
    ) -> list[tuple[str, list[tuple[int, CommittedOffset | None]]]]:
        """Committed offsets per topic; None for a partition with none. wanted=None: all."""
        group = self.offsets_group(group_id)
        offsets = group.offsets if group is not None else {}
        if wanted is None:
            by_topic: dict[str, list[tuple[int, CommittedOffset | None]]] = {}
            for (topic, partition), value in sorted(offsets.items()):
                by_topic.setdefault(topic, []).append((partition, value))
            return list(by_topic.items())
        return [(topic, [(p, offsets.get((topic, p))) for p in partitions]) for topic, partitions in wanted]

    def delete_offsets(self, group_id: str, partitions: list[tuple[str, int]]) -> tuple[ErrorCode, list[ErrorCode]]:
        """OffsetDelete: the group error, then one error per partition. A consumer group
        (KIP-848) refuses the topics its members subscribe to, whatever its state, as Kafka's."""
        group = self.groups.get(group_id)
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID, []
        if group_id in self.consumer_groups:
            group = self.consumer_groups[group_id]
            subscribed: set[str] | None = set(group.subscription_metadata)
        elif group is None or group.is_(DEAD):
            return ErrorCode.GROUP_ID_NOT_FOUND, []
        elif group.is_(EMPTY):
            subscribed = set()
        elif group.protocol_type == "consumer":
            subscribed = group.subscribed_topics()
        else:
            return ErrorCode.NON_EMPTY_GROUP, []
        errors = []
        for topic, partition in partitions:
            if not self.partition_exists(topic, partition):
                errors.append(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            elif subscribed is None or topic in subscribed:
                errors.append(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC)
            else:
                errors.append(ErrorCode.NONE)
        doomed = [tp for tp, e in zip(partitions, errors) if e == ErrorCode.NONE and tp in group.offsets]
        try:
            self.coordinator.write(group_id, _tombstones(group_id, doomed))
        except CoordinatorWriteError as exc:
            log.error("group %s: cannot delete offsets: %s", group_id, exc.cause)
            return exc.error, []
        return ErrorCode.NONE, errors

    def expire_offsets(self, now: int) -> None:
        """offsets.retention.minutes, as Kafka applies it since KIP-211: the offsets of a
        consumer group expire once the group has been Empty that long; offsets committed
        without membership (no protocol type) each expire that long after their commit. An
        empty group left without offsets goes too."""
        retention = self.config["offsets.retention.minutes"] * 60_000
        for group_id, group in list(self.consumer_groups.items()):
            self._expire_consumer_group_offsets(group_id, group, now, retention)
        for group_id, group in list(self.groups.items()):
            if group.protocol_type is None:
                doomed = [tp for tp, c in group.offsets.items() if now - c.commit_timestamp >= retention]
            elif group.is_(EMPTY) and now - group.state_timestamp >= retention:
                doomed = list(group.offsets)
            else:
                continue
            if doomed:
                self._drop_offsets(group_id, group, doomed, "expired")
            if group.is_(EMPTY) and not group.offsets:
                self.coordinator.delete_group(group_id)

    def _expire_consumer_group_offsets(self, group_id: str, group, now: int, retention: int) -> None:
        """Kafka's cleanupExpiredOffsets for a consumer group: an offset of a topic no member
        subscribes to expires `retention` after its commit; a group left Empty with every
        offset expired (or none) is deleted."""
        subscribed = set(group.subscription_metadata)
        kept = [tp for tp in group.offsets if tp[0] in subscribed or self.has_pending_txn_offset(group_id, *tp)]
        doomed = [tp for tp, c in group.offsets.items() if tp not in kept and now - c.commit_timestamp >= retention]
        if doomed:
            self._drop_offsets(group_id, group, doomed, "expired")
        if not group.offsets and not group.members:
            self.coordinator.delete_group(group_id)

    def _drop_offsets(self, group_id: str, group, doomed: list[tuple[str, int]], why: str) -> None:
        try:
            self.coordinator.write(group_id, _tombstones(group_id, doomed))
        except CoordinatorWriteError as exc:
            log.error("group %s: cannot drop %s offsets: %s", group_id, why, exc.cause)
            return
        log.info("group %s: dropped %d %s committed offsets", group_id, len(doomed), why)

    def on_topic_deleted(self, topic: str) -> None:
        """Drop every group's committed offsets for a deleted topic, as Kafka's coordinator does,
        so a topic created again under the same name starts without stale positions. An empty
        group left with no offsets goes too."""
        for group_id, group in list(self.consumer_groups.items()):
            doomed = [tp for tp in group.offsets if tp[0] == topic]
            if doomed:
                self._drop_offsets(group_id, group, doomed, f"deleted topic {topic}'s")
                if not group.offsets and not group.members:
                    self.coordinator.delete_group(group_id)
        for group_id, group in list(self.groups.items()):
            doomed = [tp for tp in group.offsets if tp[0] == topic]
            if not doomed:
                continue
            self._drop_offsets(group_id, group, doomed, f"deleted topic {topic}'s")
            if group.is_(EMPTY) and not group.offsets:
                self.coordinator.delete_group(group_id)

    def partition_exists(self, topic: str, partition: int) -> bool:
        metadata = self.logs.topics.get(topic)
        return metadata is not None and 0 <= partition < metadata.partitions


def _tombstones(group_id: str, partitions: list[tuple[str, int]]) -> list[CoordinatorRecord]:
    return [CoordinatorRecord(formats.offset_key(OffsetKey(group_id, *tp)), None) for tp in partitions]
