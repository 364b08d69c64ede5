"""One consumer group of the classic protocol: its members, generation and state.

The states and their allowed transitions are Kafka's (GroupMetadata.scala):

    Empty --join--> PreparingRebalance --all joined--> CompletingRebalance --leader syncs--> Stable
      ^                  ^    |                              |                              |
      |                  |    +--no member left--> Empty     +----member joins/leaves-------+
      +--------- Dead <--+-- (deleted; every state may go to Dead)

This module holds the data and the small rules that need no clock or storage; the
coordinator drives the transitions.
"""

from __future__ import annotations

import enum
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import ClassVar

import trio

from trafka.broker.coordinators.group.formats import CommittedOffset, subscribed_topics
from trafka.wire.errors import ErrorCode

CONSUMER_PROTOCOL_TYPE = "consumer"
MAX_TRANSITIONS_KEPT = 100


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


_PREVIOUS_STATES = {
    GroupState.PREPARING_REBALANCE: {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY},
    GroupState.COMPLETING_REBALANCE: {GroupState.PREPARING_REBALANCE},
    GroupState.STABLE: {GroupState.COMPLETING_REBALANCE},
    GroupState.EMPTY: {GroupState.PREPARING_REBALANCE},
    GroupState.DEAD: set(GroupState),
}


class Reply:
    """The one answer a long-polling JoinGroup or SyncGroup handler waits for."""

    def __init__(self):
        self._event = trio.Event()
        self.value = None

    @property
    def done(self) -> bool:
        return self._event.is_set()

    def set(self, value) -> None:
        if not self._event.is_set():
            self.value = value
            self._event.set()

    async def wait(self):
        await self._event.wait()
        return self.value


@dataclass
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    heartbeat_deadline: int = 0
    join_reply: Reply | None = None  # set while the member waits in JoinGroup
    sync_reply: Reply | None = None  # set while the member waits in SyncGroup

    @property
    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def metadata(self, protocol: str) -> bytes | None:
        return next((data for name, data in self.protocols if name == protocol), None)

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return self.protocols == protocols

    def awaiting_join(self) -> bool:
        return self.join_reply is not None and not self.join_reply.done

    def awaiting_sync(self) -> bool:
        return self.sync_reply is not None and not self.sync_reply.done

    def is_kept_alive(self, now: int) -> bool:
        """A member parked in JoinGroup or SyncGroup cannot heartbeat, so it does not expire."""
        return self.awaiting_join() or self.awaiting_sync() or now < self.heartbeat_deadline


@dataclass
class Group:
    group_type: ClassVar[str] = "classic"  # ListGroups v5 type; KIP-848 groups are "consumer"
    group_id: str
    state_timestamp: int
    state: GroupState = GroupState.EMPTY
    generation: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # group instance id -> member id
    # Members told MEMBER_ID_REQUIRED (JoinGroup v4+) that have not rejoined yet -> deadline.
    pending_members: dict[str, int] = field(default_factory=dict)
    # PreparingRebalance: when the join completes even if members are missing.
    join_deadline: int | None = None
    # The first rebalance of an Empty group waits group.initial.rebalance.delay.ms for more
    # members, again after each newcomer, but never past this bound.
    initial_join_bound: int | None = None
    new_member_added: bool = False
    # CompletingRebalance: members that have not sent SyncGroup yet, and until when they may.
    pending_sync: set[str] = field(default_factory=set)
    sync_deadline: int | None = None
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)
    # The last state changes since the broker started, oldest first (for the console's
    # rebalance history): dicts of time_ms, previous_state, state, generation, protocol,
    # leader, members (client ids) and reason.
    transitions: deque = field(default_factory=lambda: deque(maxlen=MAX_TRANSITIONS_KEPT))

    def is_(self, *states: GroupState) -> bool:
        return self.state in states

    def transition(self, state: GroupState, now: int, reason: str | None = None) -> None:
        if self.state not in _PREVIOUS_STATES[state]:
            raise AssertionError(f"group {self.group_id}: {self.state.value} -> {state.value} is not a valid transition")
        self.transitions.append({
            "time_ms": now, "previous_state": self.state.value, "state": state.value, "generation": self.generation,
            "protocol": self.protocol_name, "leader": self.leader_id,
            "members": sorted(m.client_id for m in self.members.values()), "reason": reason,
        })
        self.state = state
        self.state_timestamp = now

    # --- membership ---------------------------------------------------------------------

    def add(self, member: Member) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if self.leader_id is None:
            self.leader_id = member.member_id

    def remove(self, member_id: str) -> Member:
        member = self.members.pop(member_id)
        if member.group_instance_id is not None and self.static_members.get(member.group_instance_id) == member_id:
            del self.static_members[member.group_instance_id]
        self.pending_sync.discard(member_id)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        return member

    def replace_static_member(self, old_id: str, new_id: str) -> Member:
        """A static member rejoined with a new member id; it keeps its place and assignment."""
        member = self.members.pop(old_id)
        member.member_id = new_id
        self.members[new_id] = member
        self.static_members[member.group_instance_id] = new_id
        if old_id in self.pending_sync:
            self.pending_sync.discard(old_id)
            self.pending_sync.add(new_id)
        if self.leader_id == old_id:
            self.leader_id = new_id
        return member

    def validate_member(self, member_id: str, group_instance_id: str | None) -> ErrorCode:
        """Kafka's validateCurrentMember: a static id bound to another member id is fenced."""
        if group_instance_id is not None:
            bound = self.static_members.get(group_instance_id)
            if bound is not None and bound != member_id:
                return ErrorCode.FENCED_INSTANCE_ID
        if member_id not in self.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return ErrorCode.NONE

    def has_all_members_joined(self) -> bool:
        return not self.pending_members and all(m.awaiting_join() for m in self.members.values())

    def max_rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # --- protocols ----------------------------------------------------------------------

    def supports_protocols(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        names = {name for name, _ in protocols}
        if not self.members:
            return bool(protocol_type) and bool(names)
        return protocol_type == self.protocol_type and bool(names & self.candidate_protocols())

    def candidate_protocols(self) -> set[str]:
        """Protocols every member supports."""
        sets = [set(m.protocol_names) for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def select_protocol(self) -> str | None:
        """Each member votes for its most preferred candidate; the most votes win."""
        candidates = self.candidate_protocols()
        if not candidates:
            return None
        votes = Counter(next(n for n in m.protocol_names if n in candidates) for m in self.members.values())
        best = max(votes.values())
        leader = self.members.get(self.leader_id)
        order = leader.protocol_names if leader else sorted(candidates)
        return next(name for name in order if votes.get(name) == best)

    def subscribed_topics(self) -> set[str] | None:
        """Topics the members consume; None when unknown (then every topic counts as subscribed)."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE or self.protocol_name is None or not self.members:
            return None
        topics: set[str] = set()
        for member in self.members.values():
            metadata = member.metadata(self.protocol_name)
            names = None if metadata is None else subscribed_topics(metadata)
            if names is None:
                return None
            topics |= names
        return topics
