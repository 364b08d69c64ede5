"""Classic groups: Kafka's JoinGroup / SyncGroup / Heartbeat / LeaveGroup protocol.

The rules follow Kafka's classic group handling (GroupMetadataManager's classic side and
ClassicGroup); where a rule needs a paragraph, the Kafka method it mirrors is named. Everything
here is synchronous except the two long polls, JoinGroup waiting for the rebalance to complete and
SyncGroup waiting for the leader's assignment; each waits on its member's `Reply` under a trio
timeout.

Deadlines (member sessions, join and sync timeouts, the initial rebalance delay) are plain numbers
on the groups; `expire(now)` acts on every one that has passed and `next_deadline()` says when to
call it again.

`ClassicGroupManager` is one part of the `GroupCoordinator` (trafka/broker/coordinators/group/context.py);
it writes group metadata through the coordinator's `store_group`, which changes the group only
once the record is written (a static member's rejoin, the leader's assignment).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field, replace

import trio

from trafka.broker.coordinators.group.context import CoordinatorPart
from trafka.broker.coordinators.group.group import Group, GroupState, Member, Reply
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.coordinator")

EMPTY, PREPARING, COMPLETING, STABLE, DEAD = (
    GroupState.EMPTY,
    GroupState.PREPARING_REBALANCE,
    GroupState.COMPLETING_REBALANCE,
    GroupState.STABLE,
    GroupState.DEAD,
)

# A long poll outlives the deadline that should answer it by this much before giving up on
# its own; it only fires if a deadline was lost.
REPLY_GRACE_SECONDS = 5.0


@dataclass
class JoinRequest:
    group_id: str
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    require_known_member_id: bool
    reason: str | None = None  # JoinGroup v8+ (KIP-800): why the client joins, for the log

    def because(self, what: str) -> str:
        return f"{what}: {self.reason}" if self.reason else what


@dataclass
class JoinResult:
    error: ErrorCode
    member_id: str = ""
    generation: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    # (member id, group instance id, metadata): for the leader only.
    members: list[tuple[str, str | None, bytes]] = field(default_factory=list)
    # A static leader rejoined a Stable group: the assignment stands (JoinGroup v9, KIP-814).
    skip_assignment: bool = False


@dataclass
class SyncResult:
    error: ErrorCode
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


class ClassicGroupManager(CoordinatorPart):
    # --- JoinGroup ----------------------------------------------------------------------

    async def join_group(self, request: JoinRequest) -> JoinResult:
        outcome = self._join(request)
        self._reschedule()
        if isinstance(outcome, JoinResult):
            return outcome
        member, deadline = outcome
        with trio.move_on_after(self._wait_seconds(deadline)):
            return await member.join_reply.wait()
        return JoinResult(ErrorCode.REBALANCE_IN_PROGRESS, member.member_id)

    def _wait_seconds(self, deadline: int | None) -> float:
        """How long a long poll waits: until the deadline that answers it, plus a grace."""
        return max((deadline or 0) - self._now(), 0) / 1000 + REPLY_GRACE_SECONDS

    @staticmethod
    def _parked_in_join(group: Group, member: Member) -> tuple[Member, int | None]:
        return member, max(group.join_deadline or 0, group.initial_join_bound or 0) or None

    def _join(self, request: JoinRequest) -> JoinResult | tuple[Member, int | None]:
        now = self._now()
        if not request.group_id:
            return JoinResult(ErrorCode.INVALID_GROUP_ID, request.member_id)
        if not (
            self.config["group.min.session.timeout.ms"]
            <= request.session_timeout_ms
            <= self.config["group.max.session.timeout.ms"]
        ):
            return JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, request.member_id)
        consumer_group = self.consumer_groups.get(request.group_id)
        if consumer_group is not None:
            # (A consumer group with members hosts classic members: the coordinator sends their
            # JoinGroup to hosted.py.) An empty one becomes a classic group, keeping its offsets.
            error = self.coordinator.convert_to_classic(request.group_id, now)
            if error:
                return JoinResult(error, request.member_id)
        group = self.groups.get(request.group_id)
        if group is None:
            if request.member_id:
                return JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, request.member_id)
            group = self.groups[request.group_id] = Group(request.group_id, now)
        if group.is_(DEAD):
            return JoinResult(ErrorCode.COORDINATOR_NOT_AVAILABLE, request.member_id)
        if not group.supports_protocols(request.protocol_type, request.protocols):
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, request.member_id)
        if not request.member_id:
            return self._join_new_member(group, request, now)
        return self._join_known_member(group, request, now)

    def _join_new_member(self, group: Group, request: JoinRequest, now: int) -> JoinResult | tuple[Member, int | None]:
        member_id = f"{request.group_instance_id or request.client_id}-{uuid.uuid4()}"
        if request.group_instance_id is not None:
            old_id = group.static_members.get(request.group_instance_id)
            if old_id is not None:
                return self._rejoin_static_member(group, old_id, member_id, request, now)
            return self._add_member_and_rebalance(group, member_id, request, now)
        if request.require_known_member_id:
            # JoinGroup v4+: hand out the id first, so a client that times out and retries
            # rejoins as the same member instead of leaving a ghost in the rebalance.
            group.pending_members[member_id] = now + request.session_timeout_ms
            return JoinResult(ErrorCode.MEMBER_ID_REQUIRED, member_id)
        return self._add_member_and_rebalance(group, member_id, request, now)

    def _join_known_member(self, group: Group, request: JoinRequest, now: int) -> JoinResult | tuple[Member, int | None]:
        if request.member_id in group.pending_members:
            del group.pending_members[request.member_id]
            return self._add_member_and_rebalance(group, request.member_id, request, now)
        error = group.validate_member(request.member_id, request.group_instance_id)
        if error:
            return JoinResult(error, request.member_id)
        member = group.members[request.member_id]
        if group.is_(PREPARING):
            return self._update_member_and_rebalance(group, member, request, now)
        if group.is_(COMPLETING):
            if member.matches(request.protocols):
                return self._join_result(group, member)  # a retry of a join already answered
            return self._update_member_and_rebalance(group, member, request, now)
        if group.is_(STABLE):
            if member.member_id == group.leader_id or not member.matches(request.protocols):
                # The leader rejoins to recompute the assignment (say, for new partitions).
                return self._update_member_and_rebalance(group, member, request, now)
            return self._join_result(group, member, with_members=False)
        return JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, request.member_id)

    def _add_member_and_rebalance(self, group: Group, member_id: str, request: JoinRequest, now: int) -> tuple[Member, int | None]:
        member = Member(
            member_id,
            request.group_instance_id,
            request.client_id,
            request.client_host,
            request.rebalance_timeout_ms,
            request.session_timeout_ms,
            request.protocol_type,
            request.protocols,
            heartbeat_deadline=now + request.session_timeout_ms,
            join_reply=Reply(),
        )
        group.add(member)
        log.info("group %s: member %s joined", group.group_id, member_id)
        if group.is_(PREPARING):
            group.new_member_added = True
        self._maybe_prepare_rebalance(group, now, request.because(f"member {member_id} joined"))
        self._maybe_complete_join(group, now)
        return self._parked_in_join(group, member)

    def _update_member_and_rebalance(self, group: Group, member: Member, request: JoinRequest, now: int) -> tuple[Member, int | None]:
        member.protocols = request.protocols
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
        member.session_timeout_ms = request.session_timeout_ms
        if not member.awaiting_join():
            member.join_reply = Reply()  # a retried join shares the pending answer
        self._maybe_prepare_rebalance(group, now, request.because(f"member {member.member_id} rejoined"))
        self._maybe_complete_join(group, now)
        return self._parked_in_join(group, member)

    def _rejoin_static_member(self, group: Group, old_id: str, new_id: str, request: JoinRequest, now: int) -> JoinResult | tuple[Member, int | None]:
        """Kafka's updateStaticMemberAndRebalance: the instance takes over its old place; a
        Stable group whose protocol would not change skips the rebalance."""
        old = group.members[old_id]
        self._settle(old, ErrorCode.FENCED_INSTANCE_ID)

        def take_over(member: Member) -> None:
            member.protocols = request.protocols
            member.client_id, member.client_host = request.client_id, request.client_host
            member.rebalance_timeout_ms = request.rebalance_timeout_ms
            member.session_timeout_ms = request.session_timeout_ms
            member.heartbeat_deadline = now + request.session_timeout_ms

        def rejoin() -> Member:
            member = group.replace_static_member(old_id, new_id)
            take_over(member)
            log.info("group %s: static member %s rejoined as %s", group.group_id, request.group_instance_id, new_id)
            return member

        if group.is_(STABLE) and group.select_protocol() == group.protocol_name:
            # Kafka writes the group with the new member id first; when that fails the old
            # member keeps its place and the new one is answered with the error.
            prospective = replace(old, member_id=new_id, join_reply=None, sync_reply=None)
            take_over(prospective)
            members = [prospective if m.member_id == old_id else m for m in group.members.values()]
            error = self.coordinator.store_group(group, now, members=members, apply=rejoin)
            if error:
                return JoinResult(error, new_id)
            member = group.members[new_id]
            result = self._join_result(group, member)
            result.skip_assignment = member.member_id == group.leader_id
            return result
        member = rejoin()
        member.join_reply = Reply()
        self._maybe_prepare_rebalance(group, now, f"static member {request.group_instance_id} rejoined")
        self._maybe_complete_join(group, now)
        return self._parked_in_join(group, member)

    def _join_result(self, group: Group, member: Member, *, with_members: bool = True) -> JoinResult:
        members = []
        if with_members and member.member_id == group.leader_id:
            members = [(m.member_id, m.group_instance_id, m.metadata(group.protocol_name) or b"") for m in group.members.values()]
        return JoinResult(
            ErrorCode.NONE,
            member.member_id,
            group.generation,
            group.protocol_type,
            group.protocol_name,
            group.leader_id or "",
            members,
        )

    # --- rebalancing --------------------------------------------------------------------

    def _maybe_prepare_rebalance(self, group: Group, now: int, reason: str) -> None:
        if group.is_(STABLE, COMPLETING, EMPTY):
            self._prepare_rebalance(group, now, reason)

    def _prepare_rebalance(self, group: Group, now: int, reason: str) -> None:
        if group.is_(COMPLETING):
            # Assignments handed out in this generation are void: waiting syncs learn it now.
            for member in group.members.values():
                member.assignment = b""
                if member.awaiting_sync():
                    member.sync_reply.set(SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
                    member.heartbeat_deadline = now + member.session_timeout_ms
        group.pending_sync.clear()
        group.sync_deadline = None
        if group.is_(EMPTY):
            delay = self.config["group.initial.rebalance.delay.ms"]
            group.join_deadline = now + delay
            group.initial_join_bound = now + max(group.max_rebalance_timeout_ms(), delay)
        else:
            group.join_deadline = now + group.max_rebalance_timeout_ms()
            group.initial_join_bound = None
        group.new_member_added = False
        group.transition(PREPARING, now, reason)
        log.info("group %s: preparing rebalance (generation %d): %s", group.group_id, group.generation, reason)
        self._maybe_complete_join(group, now)

    def _maybe_complete_join(self, group: Group, now: int) -> None:
        if not group.is_(PREPARING):
            return
        if group.initial_join_bound is None:
            if group.has_all_members_joined():
                self._complete_join(group, now)
        elif group.join_deadline is not None and group.join_deadline <= now:
            self._on_join_deadline(group, now)  # no initial delay configured

    def _on_join_deadline(self, group: Group, now: int) -> None:
        """Kafka's InitialDelayedJoin: while newcomers keep arriving, wait one more delay."""
        if group.initial_join_bound is not None and group.new_member_added and now < group.initial_join_bound:
            group.new_member_added = False
            group.join_deadline = min(now + self.config["group.initial.rebalance.delay.ms"], group.initial_join_bound)
            return
        self._complete_join(group, now)

    def _complete_join(self, group: Group, now: int) -> None:
        """Kafka's onCompleteJoin: drop who did not rejoin, start the next generation."""
        group.join_deadline = group.initial_join_bound = None
        for member in list(group.members.values()):
            if not member.awaiting_join() and member.group_instance_id is None:
                self._drop(group, member, "did not rejoin in time")
        group.generation += 1
        if not group.members:
            group.protocol_name = None
            group.transition(EMPTY, now)
            log.info("group %s: empty at generation %d", group.group_id, group.generation)
            self.coordinator.store_group(group, now)  # a failure is logged only, as in Kafka's onCompleteJoin
            return
        leader = group.members.get(group.leader_id)
        if leader is None or not leader.awaiting_join():
            group.leader_id = next((m.member_id for m in group.members.values() if m.awaiting_join()), next(iter(group.members)))
        group.protocol_name = group.select_protocol()
        group.transition(COMPLETING, now)
        group.pending_sync = set(group.members)
        group.sync_deadline = now + group.max_rebalance_timeout_ms()
        log.info(
            "group %s: generation %d with %d members, protocol %s, leader %s",
            group.group_id, group.generation, len(group.members), group.protocol_name, group.leader_id,
        )
        for member in group.members.values():
            # Every member's session starts again, a static member kept without rejoining too.
            member.heartbeat_deadline = now + member.session_timeout_ms
            if member.awaiting_join():
                member.join_reply.set(self._join_result(group, member))

    def _on_sync_deadline(self, group: Group, now: int) -> None:
        """Members that never sent SyncGroup after the join are removed (KAFKA-12890)."""
        late = [group.members[m] for m in group.pending_sync if m in group.members]
        group.pending_sync.clear()
        group.sync_deadline = None
        if late and group.is_(COMPLETING, STABLE):
            for member in late:
                self._drop(group, member, "did not sync in time")
            self._prepare_rebalance(group, now, "members did not sync in time")

    def settle_all(self, group: Group, error: ErrorCode) -> None:
        """Answer every parked JoinGroup and SyncGroup of the group with `error` (the group
        became a consumer group: its members rejoin; its shard unloaded: they find the new
        coordinator)."""
        for member in group.members.values():
            self._settle(member, error)

    def prepare_rebalance(self, group: Group, now: int, reason: str) -> None:
        self._prepare_rebalance(group, now, reason)

    def _settle(self, member: Member, error: ErrorCode) -> None:
        """Answer the member's parked JoinGroup or SyncGroup with an error."""
        if member.awaiting_join():
            member.join_reply.set(JoinResult(error, member.member_id))
        if member.awaiting_sync():
            member.sync_reply.set(SyncResult(error))

    def _drop(self, group: Group, member: Member, reason: str) -> None:
        self._settle(member, ErrorCode.UNKNOWN_MEMBER_ID)
        group.remove(member.member_id)
        log.info("group %s: member %s removed: %s", group.group_id, member.member_id, reason)

    def _remove_member_and_update_group(self, group: Group, member: Member, now: int, reason: str) -> None:
        self._drop(group, member, reason)
        if group.is_(STABLE, COMPLETING):
            self._prepare_rebalance(group, now, f"member {member.member_id} left ({reason})")
        else:
            self._maybe_complete_join(group, now)

    # --- SyncGroup ----------------------------------------------------------------------

    async def sync_group(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        group_instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: dict[str, bytes],
    ) -> SyncResult:
        outcome = self._sync(group_id, generation, member_id, group_instance_id, protocol_type, protocol_name, assignments)
        self._reschedule()
        if isinstance(outcome, SyncResult):
            return outcome
        member, deadline = outcome
        with trio.move_on_after(self._wait_seconds(deadline)):
            return await member.sync_reply.wait()
        return SyncResult(ErrorCode.REBALANCE_IN_PROGRESS)

    def _sync(self, group_id, generation, member_id, group_instance_id, protocol_type, protocol_name, assignments) -> SyncResult | tuple[Member, int | None]:
        now = self._now()
        group = self.groups.get(group_id)
        if group is None:
            return SyncResult(ErrorCode.UNKNOWN_MEMBER_ID)
        if group.is_(DEAD):
            return SyncResult(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        error = group.validate_member(member_id, group_instance_id)
        if error:
            return SyncResult(error)
        if generation != group.generation:
            return SyncResult(ErrorCode.ILLEGAL_GENERATION)
        if (protocol_type is not None and protocol_type != group.protocol_type) or (
            protocol_name is not None and protocol_name != group.protocol_name
        ):
            return SyncResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        member = group.members[member_id]
        if group.is_(EMPTY):
            return SyncResult(ErrorCode.UNKNOWN_MEMBER_ID)
        if group.is_(PREPARING):
            return SyncResult(ErrorCode.REBALANCE_IN_PROGRESS)
        self._synced(group, member_id)
        if group.is_(STABLE):  # the assignment again; the session is not restarted (as in Kafka)
            return self._sync_result(group, member)
        if not member.awaiting_sync():
            member.sync_reply = Reply()
        if member_id == group.leader_id:
            def install_assignment() -> None:
                for m in group.members.values():
                    m.assignment = assignments.get(m.member_id, b"")
            members = [replace(m, assignment=assignments.get(m.member_id, b"")) for m in group.members.values()]
            error = self.coordinator.store_group(group, now, members=members, apply=install_assignment)
            if error:
                # The assignment was not written, so it is not the group's. As Kafka's
                # resetAndPropagateAssignmentError: every waiting member (the leader too)
                # learns the error, and the group rebalances.
                for m in group.members.values():
                    if m.awaiting_sync():
                        m.sync_reply.set(SyncResult(error))
                self._prepare_rebalance(group, now, f"{error.name} storing the assignment")
                return member, group.sync_deadline
            group.transition(STABLE, now)
            log.info("group %s: stable at generation %d", group.group_id, group.generation)
            for m in group.members.values():
                if m.awaiting_sync():
                    m.sync_reply.set(self._sync_result(group, m))
                    m.heartbeat_deadline = now + m.session_timeout_ms
            # The leader's answer goes out before the followers' parked handlers run: Kafka sends
            # every member's answer at once, so a member that gave up partitions (usually the
            # leader, the oldest member) has its new assignment when a newcomer's arrives.
            # Parking the leader too let trio send the newcomer's first, and aiokafka's
            # start() returned while the leader still held every partition.
            return member.sync_reply.value
        return member, group.sync_deadline

    @staticmethod
    def _synced(group: Group, member_id: str) -> None:
        group.pending_sync.discard(member_id)
        if not group.pending_sync:
            group.sync_deadline = None

    @staticmethod
    def _sync_result(group: Group, member: Member) -> SyncResult:
        return SyncResult(ErrorCode.NONE, member.assignment, group.protocol_type, group.protocol_name)

    # --- Heartbeat and LeaveGroup -------------------------------------------------------

    def heartbeat(self, group_id: str, generation: int, member_id: str, group_instance_id: str | None) -> ErrorCode:
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if group.is_(DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        error = group.validate_member(member_id, group_instance_id)
        if error:
            return error
        member = group.members[member_id]
        # Kafka's validateClassicGroupHeartbeat checks the generation before the state: a
        # heartbeat of another generation is ILLEGAL_GENERATION and keeps nobody alive.
        if generation != group.generation:
            return ErrorCode.ILLEGAL_GENERATION
        if group.is_(EMPTY):
            return ErrorCode.UNKNOWN_MEMBER_ID
        member.heartbeat_deadline = self._now() + member.session_timeout_ms
        return ErrorCode.REBALANCE_IN_PROGRESS if group.is_(PREPARING) else ErrorCode.NONE

    def leave_group(self, group_id: str, leaving: list[tuple[str, str | None]]) -> tuple[ErrorCode, list[ErrorCode]]:
        """(member id, group instance id) pairs leave; the group error, then one per member."""
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.NONE, [ErrorCode.UNKNOWN_MEMBER_ID] * len(leaving)
        if group.is_(DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, [ErrorCode.COORDINATOR_NOT_AVAILABLE] * len(leaving)
        now = self._now()
        errors = [self._leave_one(group, member_id, instance_id, now) for member_id, instance_id in leaving]
        self._reschedule()
        return ErrorCode.NONE, errors

    def _leave_one(self, group: Group, member_id: str, group_instance_id: str | None, now: int) -> ErrorCode:
        if group_instance_id is not None:
            bound = group.static_members.get(group_instance_id)
            if bound is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if member_id and member_id != bound:
                return ErrorCode.FENCED_INSTANCE_ID
            member_id = bound
        elif member_id in group.pending_members:
            del group.pending_members[member_id]
            self._maybe_complete_join(group, now)
            return ErrorCode.NONE
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        self._remove_member_and_update_group(group, member, now, "left the group")
        return ErrorCode.NONE

    # --- timers -------------------------------------------------------------------------

    def expire(self, now: int) -> None:
        """Act on every deadline that has passed: sessions, pending ids, join and sync timeouts."""
        for group in list(self.groups.values()):
            for member_id, deadline in list(group.pending_members.items()):
                if deadline <= now:
                    del group.pending_members[member_id]
                    self._maybe_complete_join(group, now)
            for member in list(group.members.values()):
                if member.member_id in group.members and not member.is_kept_alive(now):
                    self._remove_member_and_update_group(group, member, now, "session timed out")
            if group.is_(PREPARING) and group.join_deadline is not None and group.join_deadline <= now:
                self._on_join_deadline(group, now)
            if group.sync_deadline is not None and group.sync_deadline <= now:
                self._on_sync_deadline(group, now)

    def next_deadline(self) -> int | None:
        deadlines: list[int] = []
        for group in self.groups.values():
            deadlines.extend(group.pending_members.values())
            deadlines.extend(
                m.heartbeat_deadline for m in group.members.values() if not (m.awaiting_join() or m.awaiting_sync())
            )
            if group.is_(PREPARING) and group.join_deadline is not None:
                deadlines.append(group.join_deadline)
            if group.sync_deadline is not None:
                deadlines.append(group.sync_deadline)
        return min(deadlines, default=None)
