"""Consumer groups of the KIP-848 protocol: ConsumerGroupHeartbeat.

Kafka's GroupMetadataManager (its consumer-group side), CurrentAssignmentBuilder and
ConsumerGroup, scaled down. One heartbeat does three steps, as in Kafka:

1. The member is created or updated; a new member, a changed subscription or a change of the
   subscribed topics' metadata (a topic created, deleted or grown, or a regex that now matches
   more) bumps the group epoch. A regex no member had is resolved asynchronously, as Kafka's
   GroupMetadataManager resolves it: the heartbeat that brings it counts its literal topics only,
   and the group's next heartbeat resolves it (the group epoch moves, the assignment grows). A
   resolved regex is matched against the existing topics on every heartbeat, so a topic created
   later is picked up at the next heartbeat.
2. If the group epoch is ahead of the target assignment epoch, the server-side assignor
   (`assignors.py`: the ServerAssignor most members ask for, else the first of
   group.consumer.assignors)
   computes a new target assignment for every member.
3. The member is reconciled towards its target (`_reconcile`, CurrentAssignmentBuilder): it
   first revokes what it must give up (UnrevokedPartitions, member epoch unchanged); once its
   heartbeat no longer reports them it moves to the target epoch and gets the partitions that
   are free; partitions another member still owns come later (UnreleasedPartitions).

Members leave with epoch -1; a static member (instance id) with -2 leaves temporarily and keeps
its assignment until its session expires, so a rejoin under the same instance id gets it back.
Sessions (group.consumer.session.timeout.ms) and the rebalance timeout of a member that must
revoke partitions are deadlines on the broker clock, acted on by `expire_consumer_groups(now)`
(the coordinator's timer task and advance_clock call it).

This module changes groups in memory only, and the coordinator runs it over copies of the
groups (`overlay.GroupOverlay`): what a heartbeat or a timer pass changed is written to
`__consumer_offsets` as Kafka's records 3-8 (`consumer_store.changes`) by the coordinator, and
the copies replace the groups only once those records are in the log. No path here writes.

`ConsumerGroupManager` is one part of the `GroupCoordinator` (context.py): it reads `groups`
(classic groups: a group id lives in one of the two maps only) and `consumer_groups`, the
overlay's when the coordinator gives one. The model is in `consumer_group.py`.
"""

from __future__ import annotations

import base64
import logging
import re
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

from trafka.broker.coordinators.group import migration
from trafka.broker.coordinators.group.context import CoordinatorPart
from trafka.broker.coordinators.group.assignors import ASSIGNORS, short_name
from trafka.broker.coordinators.group.consumer_group import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    Assignment,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
    assignment_of,
)
from trafka.broker.coordinators.runtime.internal_topic import INTERNAL_TOPICS
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.coordinator")

# ConsumerGroupHeartbeat v1 (KIP-1082): the client generates its member id.
CLIENT_GENERATED_MEMBER_ID_VERSION = 1


@dataclass
class HeartbeatRequest:
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: list[str] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Assignment | None = None  # the request's TopicPartitions; None when not sent
    client_id: str = ""
    client_host: str = ""
    api_version: int = 0
    # With an authorizer: may this heartbeat's principal DESCRIBE the topic? Filters what the
    # member's regex resolves to, as Kafka 4.0.1+ does (GroupMetadataManager's regex refresh).
    may_describe: Callable[[str], bool] | None = None


@dataclass
class HeartbeatResult:
    error: ErrorCode
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Assignment | None = None  # None: not sent (unchanged)


class _Refused(Exception):
    def __init__(self, error: ErrorCode, message: str):
        super().__init__(message)
        self.error = error
        self.message = message


def _new_member_id() -> str:
    """Kafka's Uuid.randomUuid().toString(): URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


class ConsumerGroupManager(CoordinatorPart):
    # --- ConsumerGroupHeartbeat -----------------------------------------------------------

    def consumer_group_heartbeat(self, request: HeartbeatRequest) -> HeartbeatResult:
        now = self._now()
        try:
            self._validate_heartbeat(request)
            if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                result = self._consumer_group_leave(request, now)
            else:
                result = self._consumer_group_heartbeat(request, now)
        except _Refused as refused:
            log.info("group %s: heartbeat of member %s refused: %s (%s)", request.group_id, request.member_id,
                     refused.error.name, refused.message)
            # As Kafka's error response: only the error and its message.
            return HeartbeatResult(refused.error, refused.message)
        self._reschedule()
        return result

    @staticmethod
    def new_member_id() -> str:
        return _new_member_id()

    def fence_member(self, group: ConsumerGroup, member: ConsumerMember, reason: str) -> None:
        self._fence_consumer_member(group, member, reason)

    def consumer_assignors(self) -> list[str]:
        return [short_name(name) for name in self.config["group.consumer.assignors"]]

    def _validate_heartbeat(self, request: HeartbeatRequest) -> None:
        """Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid."""
        def invalid(message: str):
            raise _Refused(ErrorCode.INVALID_REQUEST, message)

        if not request.group_id.strip():
            invalid("GroupId can't be empty.")
        if request.instance_id is not None and not request.instance_id.strip():
            invalid("InstanceId can't be empty.")
        if request.rack_id is not None and not request.rack_id.strip():
            invalid("RackId can't be empty.")
        if request.api_version >= CLIENT_GENERATED_MEMBER_ID_VERSION and not request.member_id.strip():
            invalid("MemberId can't be empty.")
        epoch = request.member_epoch
        if epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH:
            if not request.member_id.strip():
                invalid("MemberId can't be empty.")
        elif epoch == 0:
            if request.rebalance_timeout_ms == -1:
                invalid("RebalanceTimeoutMs must be provided in first request.")
            if request.owned is None or request.owned:
                invalid("TopicPartitions must be empty when (re-)joining.")
            if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
                invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if not request.member_id.strip():
                invalid("MemberId can't be empty.")
            if request.instance_id is None:
                invalid("InstanceId can't be null.")
        else:
            invalid("MemberEpoch is invalid.")
        if request.server_assignor is not None and short_name(request.server_assignor) not in self.consumer_assignors():
            raise _Refused(ErrorCode.UNSUPPORTED_ASSIGNOR, f"ServerAssignor {request.server_assignor} is not supported. "
                           f"Supported assignors: {', '.join(self.consumer_assignors())}.")
        if request.subscribed_topic_regex:
            try:
                re.compile(request.subscribed_topic_regex)
            except re.error as exc:
                raise _Refused(ErrorCode.INVALID_REGULAR_EXPRESSION,
                               f"SubscribedTopicRegex {request.subscribed_topic_regex!r} is invalid: {exc}.") from None

    def _consumer_group(self, group_id: str, create: bool, now: int) -> ConsumerGroup:
        """Kafka's getOrMaybeCreateConsumerGroup. An empty classic group (one that only holds
        committed offsets) becomes a consumer group, keeping its offsets; a classic group with
        members is converted when the migration policy allows it (online upgrade, migration.py)."""
        group = self.consumer_groups.get(group_id)
        if group is not None:
            return group
        classic = self.groups.get(group_id)
        if classic is not None and create and (classic.members or classic.pending_members):
            refusal = migration.upgrade_refusal(self.config, classic)
            if refusal is not None:
                log.info("group %s: cannot upgrade the classic group to a consumer group: %s", group_id, refusal)
                raise _Refused(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
            group = migration.upgrade(classic, self.logs, now)
            del self.groups[group_id]
            self.consumer_groups[group_id] = group
            return group
        if classic is not None and not create:
            raise _Refused(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        if not create:
            raise _Refused(ErrorCode.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        group = ConsumerGroup(group_id, now)
        if classic is not None:
            group.offsets = classic.offsets
            del self.groups[group_id]
            log.info("group %s: empty classic group becomes a consumer group", group_id)
        self.consumer_groups[group_id] = group
        return group

    def _consumer_group_heartbeat(self, request: HeartbeatRequest, now: int) -> HeartbeatResult:
        joining = request.member_epoch == 0
        group = self._consumer_group(request.group_id, joining, now)
        max_size = self.config["group.consumer.max.size"]
        if len(group.members) >= max_size and (not request.member_id or request.member_id not in group.members):
            raise _Refused(ErrorCode.GROUP_MAX_SIZE_REACHED,
                           f"The consumer group has reached its maximum capacity of {max_size} members.")
        member_id = request.member_id or _new_member_id()
        if request.instance_id is None:
            member = self._dynamic_member(group, member_id, request)
        else:
            member = self._static_member(group, member_id, request)

        # 1. Update the member; a subscription or metadata change bumps the group epoch.
        updated = replace(
            member,
            client_id=request.client_id,
            client_host=request.client_host,
        )
        if request.instance_id is not None:
            updated.instance_id = request.instance_id
        if request.rack_id is not None:
            updated.rack_id = request.rack_id
        if request.rebalance_timeout_ms != -1:
            updated.rebalance_timeout_ms = request.rebalance_timeout_ms
        if request.server_assignor is not None:
            updated.server_assignor = short_name(request.server_assignor)
        if request.subscribed_topic_names is not None:
            updated.subscribed_topic_names = tuple(sorted(set(request.subscribed_topic_names)))
        if request.subscribed_topic_regex is not None:
            updated.subscribed_topic_regex = request.subscribed_topic_regex or None
        updated.regex_filter = request.may_describe
        reconciled = self.advance_member(group, member, updated, request.owned, now,
                                         self.coordinator.group_config(group.group_id, "consumer.session.timeout.ms"))

        full_request = joining or (
            request.rebalance_timeout_ms != -1 and request.subscribed_topic_names is not None and request.owned is not None
        )
        changed = reconciled.assigned != member.assigned
        return HeartbeatResult(
            ErrorCode.NONE,
            member_id=reconciled.member_id,
            member_epoch=reconciled.member_epoch,
            heartbeat_interval_ms=self.coordinator.group_config(group.group_id, "consumer.heartbeat.interval.ms"),
            assignment=reconciled.assigned if full_request or changed else None,
        )

    def advance_member(self, group: ConsumerGroup, member: ConsumerMember, updated: ConsumerMember,
                       owned: Assignment | None, now: int, session_timeout_ms: int) -> ConsumerMember:
        """Steps 1-3 of a heartbeat (or of a hosted classic member's JoinGroup) for `updated`, the
        member as its request describes it: put it in the group, bump the group epoch when it is
        new or its subscription or the subscribed topics changed, compute a new target
        assignment when the group epoch moved past it, and reconcile the member towards its
        target given the partitions it says it `owned`. The reconciled member, in the group."""
        bump = member.member_id not in group.members or (
            (updated.subscribed_topic_names, updated.subscribed_topic_regex)
            != (member.subscribed_topic_names, member.subscribed_topic_regex)
        )
        for regex in group.resolve_pending_regexes():  # before `updated`: a regex it brings waits
            log.info("group %s: regular expression %r resolved", group.group_id, regex)
        group.put(updated)
        metadata = self._subscription_metadata(group)
        if metadata != group.subscription_metadata:
            group.subscription_metadata = metadata
            bump = True
        if bump:
            group.group_epoch += 1
            log.info("group %s: group epoch %d (member %s)", group.group_id, group.group_epoch, updated.member_id)
        if group.group_epoch > group.assignment_epoch:
            self._compute_target_assignment(group)
        reconciled = self._reconcile(group, updated, owned)
        if reconciled.state is MemberState.UNREVOKED_PARTITIONS:
            if updated.state is not MemberState.UNREVOKED_PARTITIONS or updated.member_epoch != reconciled.member_epoch:
                reconciled.rebalance_deadline = now + max(reconciled.rebalance_timeout_ms, 0)
        else:
            reconciled.rebalance_deadline = None
        reconciled.session_deadline = now + session_timeout_ms
        group.put(reconciled)
        return reconciled

    def _dynamic_member(self, group: ConsumerGroup, member_id: str, request: HeartbeatRequest) -> ConsumerMember:
        member = group.members.get(member_id)
        if request.member_epoch == 0:
            # A new member, or one rejoining after it was fenced (it keeps its member id).
            return member if member is not None else ConsumerMember(member_id)
        if member is None:
            raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}.")
        self._check_member_epoch(member, request)
        return member

    def _static_member(self, group: ConsumerGroup, member_id: str, request: HeartbeatRequest) -> ConsumerMember:
        existing = group.static_member(request.instance_id)
        if request.member_epoch == 0:
            if existing is None:
                return group.members.get(member_id) or ConsumerMember(member_id, instance_id=request.instance_id)
            if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                if existing.member_id == member_id:
                    return existing  # the same member joining again
                raise _Refused(ErrorCode.UNRELEASED_INSTANCE_ID,
                               f"Static member {member_id} with instance id {request.instance_id} cannot join the "
                               f"group because the instance id is owned by {existing.member_id} member.")
            # The instance comes back (under a new member id or its old one): it takes over the
            # old member's place, partitions and target assignment.
            rejoined = replace(existing, member_id=member_id, member_epoch=0, previous_member_epoch=0,
                               state=MemberState.STABLE, pending_revocation={})
            if existing.member_id == member_id:
                group.put(rejoined)
            else:
                group.replace_static_member(existing.member_id, rejoined)
            log.info("group %s: static member %s rejoined as %s (was %s)", group.group_id, request.instance_id,
                     member_id, existing.member_id)
            return rejoined
        if existing is None:
            raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {request.instance_id} is unknown.")
        if existing.member_id != member_id:
            raise _Refused(ErrorCode.FENCED_INSTANCE_ID, f"Static member {member_id} with instance id "
                           f"{request.instance_id} was fenced by member {existing.member_id}.")
        self._check_member_epoch(existing, request)
        return existing

    @staticmethod
    def _check_member_epoch(member: ConsumerMember, request: HeartbeatRequest) -> None:
        """Kafka's throwIfConsumerGroupMemberEpochIsInvalid: a member that lost the response
        that bumped its epoch may come back with the previous epoch, if it owns no more than
        its assignment."""
        epoch = request.member_epoch
        if epoch > member.member_epoch:
            raise _Refused(ErrorCode.FENCED_MEMBER_EPOCH, f"The consumer group member has a greater member epoch "
                           f"({epoch}) than the one known by the group coordinator ({member.member_epoch}).")
        if epoch < member.member_epoch:
            owned = request.owned
            subset = owned is not None and all(
                topic_id in member.assigned and partitions <= member.assigned[topic_id] for topic_id, partitions in owned.items()
            )
            if epoch != member.previous_member_epoch or not subset:
                raise _Refused(ErrorCode.FENCED_MEMBER_EPOCH, f"The consumer group member has a smaller member epoch "
                               f"({epoch}) than the one known by the group coordinator ({member.member_epoch}).")

    # --- subscriptions and the target assignment ------------------------------------------

    def _topic_names(self) -> list[str]:
        return sorted(name for name in self.logs.topics if name not in INTERNAL_TOPICS)

    def _subscriptions(self, group: ConsumerGroup) -> dict[str, set[str]]:
        """Every member's subscribed topics that exist, by name or by a resolved regex."""
        existing = self._topic_names()
        known = set(existing)
        return {m.member_id: m.subscribed_topics(existing, group.resolved_regexes) & known for m in group.members.values()}

    def _subscription_metadata(self, group: ConsumerGroup) -> dict[str, tuple[uuid.UUID, int]]:
        topics = set().union(*self._subscriptions(group).values()) if group.members else set()
        out = {}
        for name in topics:
            metadata = self.logs.topics.get(name)
            if metadata is not None:
                out[name] = (metadata.topic_id, metadata.partitions)
        return out

    def preferred_assignor(self, group: ConsumerGroup) -> str:
        """The assignor most members asked for, else the broker's first (Kafka's
        computePreferredServerAssignor)."""
        votes = Counter(m.server_assignor for m in group.members.values() if m.server_assignor)
        if votes:
            best = max(votes.values())
            return min(name for name, count in votes.items() if count == best)
        return self.consumer_assignors()[0]

    def _compute_target_assignment(self, group: ConsumerGroup) -> None:
        assignor = self.preferred_assignor(group)
        group.target = ASSIGNORS[assignor](self._subscriptions(group), group.subscription_metadata, group.target)
        group.assignment_epoch = group.group_epoch
        log.info("group %s: target assignment at epoch %d by %s: %s", group.group_id, group.assignment_epoch, assignor,
                 {m: {str(t): sorted(ps) for t, ps in a.items()} for m, a in group.target.items()})

    # --- reconciliation (Kafka's CurrentAssignmentBuilder) --------------------------------

    def _reconcile(self, group: ConsumerGroup, member: ConsumerMember, owned: Assignment | None) -> ConsumerMember:
        if member.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            return member
        if member.state is MemberState.STABLE:
            if member.member_epoch == group.assignment_epoch:
                return member
            return self._next_assignment(group, member, member.member_epoch, owned)
        if member.state is MemberState.UNREVOKED_PARTITIONS:
            if _owns_any(owned, member.pending_revocation):
                return member  # still waiting for the member to give them up
            return self._next_assignment(group, member, member.member_epoch + 1, owned)
        return self._next_assignment(group, member, member.member_epoch, owned)  # UNRELEASED_PARTITIONS

    def _next_assignment(self, group: ConsumerGroup, member: ConsumerMember, epoch: int, owned: Assignment | None) -> ConsumerMember:
        target = group.target.get(member.member_id, {})
        assigned, revoking, adding = {}, {}, {}
        unreleased = False
        for topic_id in set(target) | set(member.assigned):
            wanted = target.get(topic_id, frozenset())
            current = member.assigned.get(topic_id, frozenset())
            keep = current & wanted
            new = set(wanted - keep)
            # A partition still owned by another member (assigned or pending revocation) waits.
            busy = {p for p in new if group.owners.get((topic_id, p), -1) != -1 and not self._owned_by(group, member, topic_id, p)}
            unreleased = unreleased or bool(busy)
            new -= busy
            if keep:
                assigned[topic_id] = keep
            if current - keep:
                revoking[topic_id] = current - keep
            if new:
                adding[topic_id] = frozenset(new)
        if revoking and _owns_any(owned, revoking):
            return replace(member, state=MemberState.UNREVOKED_PARTITIONS, assigned=assigned, pending_revocation=revoking,
                           **_epochs(member, epoch))
        for topic_id, partitions in adding.items():
            assigned[topic_id] = assigned.get(topic_id, frozenset()) | partitions
        state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
        return replace(member, state=state, assigned=assigned, pending_revocation={},
                       **_epochs(member, group.assignment_epoch))

    @staticmethod
    def _owned_by(group: ConsumerGroup, member: ConsumerMember, topic_id: uuid.UUID, partition: int) -> bool:
        current = group.members.get(member.member_id)
        return current is not None and (topic_id, partition) in current.owned_partitions()

    # --- leaving --------------------------------------------------------------------------

    def _consumer_group_leave(self, request: HeartbeatRequest, now: int) -> HeartbeatResult:
        group = self._consumer_group(request.group_id, False, now)
        if request.instance_id is None:
            member = group.members.get(request.member_id)
            if member is None:
                raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not a member of group {group.group_id}.")
        else:
            member = group.static_member(request.instance_id)
            if member is None:
                raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {request.instance_id} is unknown.")
            if member.member_id != request.member_id:
                raise _Refused(ErrorCode.FENCED_INSTANCE_ID, f"Static member {request.member_id} with instance id "
                               f"{request.instance_id} was fenced by member {member.member_id}.")
        if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # Kafka's consumerGroupStaticMemberGroupLeave: the member stays, with its partitions,
            # until it rejoins or its session expires.
            group.put(replace(member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, pending_revocation={}))
            log.info("group %s: static member %s (%s) left temporarily", group.group_id, request.instance_id, member.member_id)
        else:
            self._fence_consumer_member(group, member, "left the group")
        return HeartbeatResult(ErrorCode.NONE, member_id=request.member_id, member_epoch=request.member_epoch)

    def _fence_consumer_member(self, group: ConsumerGroup, member: ConsumerMember, reason: str) -> None:
        """Remove the member; its partitions are free and the group epoch moves on, so the next
        heartbeat computes a new target assignment."""
        group.remove(member.member_id)
        group.group_epoch += 1
        group.subscription_metadata = self._subscription_metadata(group)
        log.info("group %s: member %s removed (%s), group epoch %d", group.group_id, member.member_id, reason,
                 group.group_epoch)

    # --- timers ---------------------------------------------------------------------------

    def expire_consumer_groups(self, now: int, held=frozenset()) -> None:
        """Fence members whose session expired, or that did not revoke in their rebalance timeout
        (but in the groups `held`, whose last such change could not be written yet)."""
        for group_id in list(self.consumer_groups):
            if group_id in held or not _due(self.coordinator.consumer_groups[group_id], now):
                continue  # read without copying it
            group = self.consumer_groups[group_id]
            for member in list(group.members.values()):
                if member.session_deadline <= now:
                    self._fence_consumer_member(group, member, "session timed out")
                elif member.rebalance_deadline is not None and member.rebalance_deadline <= now:
                    self._fence_consumer_member(group, member, "did not revoke its partitions within its rebalance timeout")
                elif member.classic_deadline is not None and member.classic_deadline <= now:
                    self._fence_consumer_member(group, member, member.classic_deadline_reason)

    def next_consumer_deadline(self, retries: dict[str, int] | None = None) -> int | None:
        """The next member deadline; a group in `retries` not before its retry time."""
        retries = retries or {}
        due = []
        for group in self.consumer_groups.values():
            first = min((m.next_deadline() for m in group.members.values()), default=None)
            if first is not None:
                due.append(max(first, retries.get(group.group_id, first)))
        return min(due, default=None)


def _due(group: ConsumerGroup, now: int) -> bool:
    return any(m.next_deadline() <= now for m in group.members.values())


def _owns_any(owned: Assignment | None, partitions: Assignment) -> bool:
    """Whether the member's reported partitions include any of `partitions`; a member that did
    not report them is assumed to still own them."""
    if owned is None:
        return True
    return any(owned.get(topic_id, frozenset()) & ps for topic_id, ps in partitions.items())


def _epochs(member: ConsumerMember, epoch: int) -> dict:
    """Kafka's updateMemberEpoch: the previous epoch is kept when the epoch moves."""
    if epoch == member.member_epoch:
        return {"member_epoch": epoch}
    return {"member_epoch": epoch, "previous_member_epoch": member.member_epoch}


def owned_from_request(topic_partitions) -> Assignment | None:
    """The TopicPartitions of a ConsumerGroupHeartbeat request as an Assignment."""
    if topic_partitions is None:
        return None
    return assignment_of((tp.topic_id, tp.partitions) for tp in topic_partitions)
