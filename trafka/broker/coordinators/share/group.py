"""A share group (KIP-932) and its members, and ShareGroupHeartbeat.

Membership as Kafka's share groups have it: a member joins with epoch 0 (its member id chosen
by the client, KIP-1082), heartbeats with its epoch, leaves with -1, and is removed when no
heartbeat came for `group.share.session.timeout.ms`. A change of members or subscriptions
bumps the group epoch and computes a new assignment (assignor.py, Kafka's SimpleAssignor:
partitions spread over the members, one shared by several only when members outnumber
partitions, each member keeping what balance allows); so does a subscribed topic's partitions
appearing or going. A share group has no revocation step, so every member is at the group
epoch at its next heartbeat.

Share groups live in the group coordinator's shards with the classic and consumer groups (one
id is one kind). The coordinator runs a heartbeat on a copy of the group and writes its
records (group_records.py: the group and assignment epochs, each member's subscription,
target and current assignment) to `__consumer_offsets` before the copy counts, so a group
and its members survive a restart, as in Kafka. The state of their partitions is durable
in `__share_group_state` (coordinator.py).
"""

from __future__ import annotations

import enum
import logging
import uuid
from dataclasses import dataclass, field

from trafka.broker.coordinators.group.context import CoordinatorPart
from trafka.broker.coordinators.share.assignor import assign
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.share")

JOIN_EPOCH, LEAVE_EPOCH = 0, -1


class ShareGroupState(enum.Enum):
    EMPTY = "Empty"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass
class ShareMember:
    member_id: str
    member_epoch: int
    client_id: str
    client_host: str
    rack_id: str | None
    subscribed_topic_names: tuple[str, ...]
    session_deadline: int
    assignment: dict[uuid.UUID, frozenset[int]] = field(default_factory=dict)
    previous_member_epoch: int = -1


@dataclass
class ShareGroup:
    group_id: str
    state_timestamp: int
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    offsets: dict = field(default_factory=dict)  # a share group commits no offsets (its state is per partition)

    group_type = "share"  # ListGroups v5
    protocol_type = "share"

    @property
    def state(self) -> ShareGroupState:
        return ShareGroupState.STABLE if self.members else ShareGroupState.EMPTY

    def is_(self, *states) -> bool:
        return self.state in states

    def subscribed_topics(self) -> set[str]:
        return {name for m in self.members.values() for name in m.subscribed_topic_names}


@dataclass
class ShareHeartbeat:
    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None
    subscribed_topic_names: list[str] | None
    client_id: str
    client_host: str


@dataclass
class ShareHeartbeatResult:
    error: ErrorCode
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: dict[uuid.UUID, frozenset[int]] | None = None


class ShareGroupManager(CoordinatorPart):
    """ShareGroupHeartbeat and the share members' sessions, over the group coordinator's share
    groups (its `share_groups`, one of its maps)."""

    @property
    def share_groups(self):
        return self.coordinator.share_groups

    def heartbeat(self, request: ShareHeartbeat, group: ShareGroup | None) -> tuple[ShareGroup | None, ShareHeartbeatResult]:
        """A member joins, heartbeats or leaves, on `group` (the coordinator's copy of the share
        group, None when there is none): the group as it is after, and the answer. The
        coordinator writes the change before the copy counts. Leaving releases nothing: the
        member's share session (and the records it holds) ends with its final
        ShareAcknowledge or its connection, which a client's close() sends after the leave."""
        now = self._now()
        if not request.group_id.strip():
            return group, ShareHeartbeatResult(ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")
        if not request.member_id.strip():
            return group, ShareHeartbeatResult(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
        if request.member_epoch == JOIN_EPOCH and request.subscribed_topic_names is None:
            return group, ShareHeartbeatResult(ErrorCode.INVALID_REQUEST, "SubscribedTopicNames must be set in first request.")
        if request.member_epoch < LEAVE_EPOCH:
            return group, ShareHeartbeatResult(ErrorCode.INVALID_REQUEST, "MemberEpoch is invalid.")
        other = self.coordinator.group(request.group_id)
        if other is not None and other.group_type != "share":
            return group, ShareHeartbeatResult(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {request.group_id} is not a share group.")
        if request.member_epoch == LEAVE_EPOCH:
            if group is not None and request.member_id in group.members:
                self.remove(group, request.member_id, "left the group", now)
            return group, ShareHeartbeatResult(ErrorCode.NONE, member_id=request.member_id, member_epoch=LEAVE_EPOCH)
        if group is None:
            if request.member_epoch != JOIN_EPOCH:
                return group, ShareHeartbeatResult(ErrorCode.UNKNOWN_MEMBER_ID, f"Group {request.group_id} has no member {request.member_id}.")
            group = ShareGroup(request.group_id, now)
        member = group.members.get(request.member_id)
        if member is None:
            if request.member_epoch != JOIN_EPOCH:
                return group, ShareHeartbeatResult(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not in the group.")
            member = ShareMember(request.member_id, 0, request.client_id, request.client_host, request.rack_id, (), now)
            group.members[member.member_id] = member
            bump = True
            log.info("share group %s: member %s joined", group.group_id, member.member_id)
        elif request.member_epoch not in (JOIN_EPOCH, member.member_epoch):
            return group, ShareHeartbeatResult(ErrorCode.FENCED_MEMBER_EPOCH, f"The member epoch {request.member_epoch} is not "
                                        f"the current one ({member.member_epoch}).")
        else:
            bump = False
        if request.subscribed_topic_names is not None:
            topics = tuple(sorted(set(request.subscribed_topic_names)))
            bump = bump or topics != member.subscribed_topic_names
            member.subscribed_topic_names = topics
        if request.rack_id is not None:
            member.rack_id = request.rack_id
        member.session_deadline = now + self.coordinator.group_config(group.group_id, "share.session.timeout.ms")
        if bump:
            group.group_epoch += 1
            self._reassign(group)
        elif not self._assignment_fits(group):
            before = {m.member_id: m.assignment for m in group.members.values()}
            self._reassign(group)
            if before != {m.member_id: m.assignment for m in group.members.values()}:
                group.group_epoch += 1
                group.assignment_epoch = group.group_epoch
        changed = member.member_epoch != group.assignment_epoch or request.member_epoch == JOIN_EPOCH
        if member.member_epoch != group.assignment_epoch:
            member.previous_member_epoch, member.member_epoch = member.member_epoch, group.assignment_epoch
        return group, ShareHeartbeatResult(
            ErrorCode.NONE, member_id=member.member_id, member_epoch=member.member_epoch,
            heartbeat_interval_ms=self.coordinator.group_config(group.group_id, "share.heartbeat.interval.ms"),
            assignment=member.assignment if changed else None,
        )

    def _assignable(self, group: ShareGroup) -> dict[str, tuple[uuid.UUID, int]]:
        found = {}
        for name in group.subscribed_topics():
            meta = self.logs.topics.get(name)
            if meta is not None:
                found[name] = (meta.topic_id, meta.partitions)
        return found

    def _reassign(self, group: ShareGroup) -> None:
        """The new target assignment from the members' current ones, at the group epoch."""
        target = assign({m.member_id: m.subscribed_topic_names for m in group.members.values()},
                        self._assignable(group), {m.member_id: m.assignment for m in group.members.values()})
        for m in group.members.values():
            m.assignment = target[m.member_id]
        group.assignment_epoch = group.group_epoch

    def _assignment_fits(self, group: ShareGroup) -> bool:
        """Whether the assignment still matches the subscribed topics: every partition held
        exists in a topic its member subscribes to, and every such partition is held (a topic
        created, deleted or grown since says no, as Kafka's subscription metadata does)."""
        topics = self._assignable(group)
        held: set[tuple[uuid.UUID, int]] = set()
        for m in group.members.values():
            ids = {topics[n][0]: topics[n][1] for n in m.subscribed_topic_names if n in topics}
            for topic_id, partitions in m.assignment.items():
                if topic_id not in ids or any(p >= ids[topic_id] for p in partitions):
                    return False
                held.update((topic_id, p) for p in partitions)
        return all((topic_id, p) in held for topic_id, count in topics.values() for p in range(count))

    def remove(self, group: ShareGroup, member_id: str, reason: str, now: int) -> None:
        """The member leaves; the others take over its partitions at a new group epoch."""
        del group.members[member_id]
        group.group_epoch += 1
        self._reassign(group)
        group.state_timestamp = now
        log.info("share group %s: member %s %s", group.group_id, member_id, reason)

    def expired(self, now: int) -> dict[str, list[str]]:
        """Group id -> its members whose heartbeats stopped by `now`."""
        found: dict[str, list[str]] = {}
        for group in list(self.share_groups.values()):
            for member in group.members.values():
                if member.session_deadline <= now:
                    found.setdefault(group.group_id, []).append(member.member_id)
        return found

    def next_deadline(self, retries: dict[str, int] | None = None) -> int | None:
        """The next session deadline; a group in `retries` not before its retry time."""
        retries = retries or {}
        due = []
        for group in self.share_groups.values():
            first = min((m.session_deadline for m in group.members.values()), default=None)
            if first is not None:
                due.append(max(first, retries.get(group.group_id, first)))
        return min(due, default=None)
