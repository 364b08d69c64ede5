"""Members of the classic protocol in a consumer group (KIP-848 online migration): JoinGroup,
SyncGroup, Heartbeat and LeaveGroup from a member that a consumer group hosts, as Kafka's
classicGroup*ToConsumerGroup methods answer them.

The consumer group's server-side assignor decides for these members too. A JoinGroup is a
heartbeat of the consumer protocol in other words: the member's subscription (the first of its
protocols) and the partitions it still owns (the subscription's owned partitions) update the
member, maybe bump the group epoch and the target assignment, and reconcile the member; the
answer comes at once, with the member epoch as the generation and no leader (nobody assigns
on the client side). SyncGroup answers the member's assigned partitions in the consumer
protocol's bytes. Heartbeat answers REBALANCE_IN_PROGRESS while the member must rejoin: the
group epoch moved past its epoch, it must revoke partitions, or partitions it waits for are
free now. LeaveGroup removes the member as a leaving consumer member is removed.

Runs on a `ConsumerGroupManager` over the coordinator's overlay (consumer.py): the coordinator
writes what changed and installs it, as for a ConsumerGroupHeartbeat; a downgrade back to a
classic group, once only classic members are left, is the coordinator's (migration.py).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from trafka.broker.coordinators.group import migration
from trafka.broker.coordinators.group.classic import JoinRequest, JoinResult, SyncResult
from trafka.broker.coordinators.group.consumer_group import ClassicMetadata, ConsumerGroup, ConsumerMember, MemberState
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.coordinator")


class _Refused(Exception):
    def __init__(self, error: ErrorCode):
        super().__init__(error.name)
        self.error = error


class HostedClassicMembers:
    def __init__(self, manager):
        self.manager = manager  # a ConsumerGroupManager over the overlay

    def _group(self, group_id: str) -> ConsumerGroup:
        group = self.manager.consumer_groups.get(group_id)
        if group is None:
            raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID)
        return group

    @staticmethod
    def _member(group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerMember:
        """Kafka's validateConsumerGroupMember, then throwIfMemberDoesNotUseClassicProtocol."""
        if instance_id is None:
            member = group.members.get(member_id)
        else:
            member = group.static_member(instance_id)
            if member is not None and member.member_id != member_id:
                raise _Refused(ErrorCode.FENCED_INSTANCE_ID)
        if member is None or not member.uses_classic_protocol:
            raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID)
        return member

    # --- JoinGroup ----------------------------------------------------------------------

    def join(self, request: JoinRequest) -> JoinResult:
        try:
            return self._join(request)
        except _Refused as refused:
            return JoinResult(refused.error, request.member_id)

    def _join(self, request: JoinRequest) -> JoinResult:
        manager, now = self.manager, self.manager._now()
        group = self._group(request.group_id)
        if not (manager.config["group.min.session.timeout.ms"] <= request.session_timeout_ms
                <= manager.config["group.max.session.timeout.ms"]):
            raise _Refused(ErrorCode.INVALID_SESSION_TIMEOUT)
        subscription = migration.subscription_of(request.protocols)
        if request.protocol_type != migration.CONSUMER_PROTOCOL_TYPE or subscription is None:
            raise _Refused(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        member_id = request.member_id or manager.new_member_id()
        max_size = manager.config["group.consumer.max.size"]
        if len(group.members) >= max_size and member_id not in group.members:
            raise _Refused(ErrorCode.GROUP_MAX_SIZE_REACHED)
        if request.require_known_member_id and not request.member_id and request.group_instance_id is None:
            # A dynamic member without an id (JoinGroup v4+): it joins again with this one.
            return JoinResult(ErrorCode.MEMBER_ID_REQUIRED, member_id)
        member = self._joining_member(group, member_id, request)
        _, parsed = subscription
        updated = replace(
            member,
            client_id=request.client_id,
            client_host=request.client_host,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            subscribed_topic_names=tuple(sorted(set(parsed.topics))),
            subscribed_topic_regex=None,
            server_assignor=None,
            classic=ClassicMetadata(request.session_timeout_ms, tuple(request.protocols)),
        )
        if request.group_instance_id is not None:
            updated.instance_id = request.group_instance_id
        if parsed.get("rack_id"):
            updated.rack_id = parsed.rack_id
        owned = migration.owned_by_id(parsed, manager.logs)
        reconciled = manager.advance_member(group, member, updated, owned, now, request.session_timeout_ms)
        reconciled.classic_deadline = now + max(request.rebalance_timeout_ms, 0)  # Kafka's sync timeout
        reconciled.classic_deadline_reason = "sent no SyncGroup within its rebalance timeout"
        log.info("group %s: classic member %s joined the consumer group at epoch %d (%s)", group.group_id, member_id,
                 reconciled.member_epoch, reconciled.state.value)
        return JoinResult(ErrorCode.NONE, member_id, reconciled.member_epoch, migration.CONSUMER_PROTOCOL_TYPE,
                          reconciled.classic.protocol_name, "", [])

    @staticmethod
    def _joining_member(group: ConsumerGroup, member_id: str, request: JoinRequest) -> ConsumerMember:
        """The member as it is (or a new one); a static member coming back under a new member id
        takes over the old one's place and partitions."""
        if request.group_instance_id is None:
            return group.members.get(member_id) or ConsumerMember(member_id)
        existing = group.static_member(request.group_instance_id)
        if existing is None:
            return group.members.get(member_id) or ConsumerMember(member_id, instance_id=request.group_instance_id)
        if existing.member_id == member_id:
            return existing
        taken = replace(existing, member_id=member_id)
        group.replace_static_member(existing.member_id, taken)
        return taken

    # --- SyncGroup ----------------------------------------------------------------------

    def sync(self, group_id: str, generation: int, member_id: str, instance_id: str | None,
             protocol_type: str | None, protocol_name: str | None) -> SyncResult:
        try:
            group = self._group(group_id)
            member = self._member(group, member_id, instance_id)
            if generation != member.member_epoch:
                raise _Refused(ErrorCode.ILLEGAL_GENERATION)
            if (protocol_type is not None and protocol_type != migration.CONSUMER_PROTOCOL_TYPE) or (
                    protocol_name is not None and protocol_name != member.classic.protocol_name):
                raise _Refused(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
            if group.group_epoch > member.member_epoch and member.state is not MemberState.UNREVOKED_PARTITIONS:
                raise _Refused(ErrorCode.REBALANCE_IN_PROGRESS)
        except _Refused as refused:
            return SyncResult(refused.error)
        member.session_deadline = self.manager._now() + member.classic.session_timeout_ms
        member.classic_deadline = None
        return SyncResult(ErrorCode.NONE, migration.assignment_bytes(member, group, self.manager.logs),
                          migration.CONSUMER_PROTOCOL_TYPE, member.classic.protocol_name)

    # --- Heartbeat and LeaveGroup -------------------------------------------------------

    def heartbeat(self, group_id: str, generation: int, member_id: str, instance_id: str | None) -> ErrorCode:
        try:
            group = self._group(group_id)
            member = self._member(group, member_id, instance_id)
            if generation != member.member_epoch:
                raise _Refused(ErrorCode.ILLEGAL_GENERATION)
        except _Refused as refused:
            return refused.error
        now = self.manager._now()
        member.session_deadline = now + member.classic.session_timeout_ms
        if (member.member_epoch < group.group_epoch or member.state is MemberState.UNREVOKED_PARTITIONS
                or (member.state is MemberState.UNRELEASED_PARTITIONS and not _waiting_on_unreleased(group, member))):
            if member.classic_deadline is None:  # Kafka's join timeout, scheduled if absent
                member.classic_deadline = now + max(member.rebalance_timeout_ms, 0)
                member.classic_deadline_reason = "did not rejoin within its rebalance timeout"
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def leave(self, group_id: str, leaving: list[tuple[str, str | None]]) -> tuple[ErrorCode, list[ErrorCode]]:
        group = self.manager.consumer_groups.get(group_id)
        if group is None:
            return ErrorCode.NONE, [ErrorCode.UNKNOWN_MEMBER_ID] * len(leaving)
        errors = []
        for member_id, instance_id in leaving:
            try:
                member = self._leaving_member(group, member_id, instance_id)
            except _Refused as refused:
                errors.append(refused.error)
                continue
            self.manager.fence_member(group, member, "left the group (LeaveGroup)")
            errors.append(ErrorCode.NONE)
        return ErrorCode.NONE, errors

    @staticmethod
    def _leaving_member(group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerMember:
        if instance_id is not None:
            member = group.static_member(instance_id)
            if member is None:
                raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID)
            if member_id and member.member_id != member_id:
                raise _Refused(ErrorCode.FENCED_INSTANCE_ID)
            return member
        member = group.members.get(member_id)
        if member is None:
            raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID)
        return member


def _waiting_on_unreleased(group: ConsumerGroup, member: ConsumerMember) -> bool:
    """Whether a partition of the member's target is still held by another member."""
    for topic_id, partitions in group.target.get(member.member_id, {}).items():
        for partition in partitions - member.assigned.get(topic_id, frozenset()):
            owner_epoch = group.owners.get((topic_id, partition), -1)
            if owner_epoch != -1 and (topic_id, partition) not in member.owned_partitions():
                return True
    return False
