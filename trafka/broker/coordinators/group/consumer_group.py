"""One consumer group of the KIP-848 protocol (group type "consumer"): its members, epochs and
assignments. The data and the small rules that need no clock or storage; `consumer.py` (the
`ConsumerGroupManager`) drives it.

The shape, in Kafka's words (ConsumerGroup, ConsumerGroupMember):

- `ConsumerGroup.group_epoch` is bumped whenever the membership, a subscription or the
  subscribed topics' metadata changes; `assignment_epoch` is the epoch the target assignment
  (`target`: member id -> `Assignment`) was computed for. A member's `member_epoch` reaches
  the assignment epoch once it is reconciled to its target.
- `ConsumerGroup.state` is derived, as in Kafka: Empty (no members), Assigning (group epoch
  ahead of the assignment epoch), Reconciling (a member not yet at the assignment epoch or not
  Stable), Stable. Dead only for a deleted group.
- `ConsumerMember.state` is CurrentAssignmentBuilder's: Stable, UnrevokedPartitions (the member
  must first give up `pending_revocation`), UnreleasedPartitions (some target partitions are
  still owned by another member).
- `ConsumerMember.assigned` is what the member was told it owns; `pending_revocation` what it
  still has to give up. `ConsumerGroup.owners` maps every (topic id, partition) that some
  member has assigned or pending revocation to that member's epoch: a partition is free only
  when absent from it.
- Topic ids are uuid.UUID; an `Assignment` is a dict topic id -> frozenset of partitions, with
  no empty sets.
- `subscription_metadata` is topic name -> (topic id, partition count) of the existing topics
  the members subscribe to (by name or by a resolved regex); a change bumps the group epoch.
- `resolved_regexes` are the members' regular expressions the group has resolved (Kafka's
  resolvedRegularExpressions). A regex no member had before is resolved after the heartbeat that
  brings it, as Kafka resolves it off the heartbeat's path: until then it matches nothing, so
  that heartbeat's assignment holds the literal topics only. A resolved regex is matched against
  the existing topics on every heartbeat; it is forgotten when no member uses it any more.
- `offsets` holds the group's committed offsets, as `Group.offsets` does for classic groups.

A group id lives either in `GroupCoordinator.groups` (classic) or in
`GroupCoordinator.consumer_groups` (this class), never in both.
"""

from __future__ import annotations

import enum
import re
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from trafka.broker.coordinators.group.formats import CommittedOffset
from trafka.broker.coordinators.group.group import MAX_TRANSITIONS_KEPT
from trafka.wire.errors import ErrorCode

Assignment = dict[uuid.UUID, frozenset[int]]

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


class ConsumerGroupState(enum.Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class MemberState(enum.Enum):
    STABLE = "Stable"
    UNREVOKED_PARTITIONS = "UnrevokedPartitions"
    UNRELEASED_PARTITIONS = "UnreleasedPartitions"


def assignment_of(pairs) -> Assignment:
    """An Assignment from (topic id, partitions) pairs, dropping empty ones."""
    out: dict[uuid.UUID, frozenset[int]] = {}
    for topic_id, partitions in pairs:
        merged = out.get(topic_id, frozenset()) | frozenset(partitions)
        if merged:
            out[topic_id] = merged
    return out


def partitions_of(assignment: Assignment) -> set[tuple[uuid.UUID, int]]:
    return {(topic_id, p) for topic_id, partitions in assignment.items() for p in partitions}


@dataclass(frozen=True)
class ClassicMetadata:
    """What a member that speaks the classic protocol (JoinGroup / SyncGroup / Heartbeat) inside
    a consumer group keeps of its JoinGroup (KIP-848 online migration): its session timeout and
    its protocols, (name, subscription bytes) in its order of preference."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]

    @property
    def protocol_name(self) -> str:
        return self.protocols[0][0]


@dataclass
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    session_deadline: int = 0
    # Set while the member must revoke partitions: it is fenced if it has not by then.
    rebalance_deadline: int | None = None
    # Which topics its regex may resolve to (in memory only): with an authorizer, the topics the
    # principal of its last heartbeat may DESCRIBE; after a restart, until that heartbeat, the
    # topics the group subscribed to before it. None: every topic.
    regex_filter: Callable[[str], bool] | None = field(default=None, compare=False, repr=False)
    # Set for a member of the classic protocol hosted by this group (online migration).
    classic: ClassicMetadata | None = None
    # A hosted classic member must send SyncGroup after its JoinGroup, and JoinGroup after a
    # Heartbeat told it to rejoin, within its rebalance timeout (Kafka's sync and join timeouts);
    # in memory only, as sessions are.
    classic_deadline: int | None = None
    classic_deadline_reason: str = ""

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic is not None

    def subscribed_topics(self, existing: list[str], resolved_regexes: set[str]) -> set[str]:
        """Topic names this member subscribes to, among `existing` (and its regex filter) for its
        regex once the group has resolved it."""
        topics = set(self.subscribed_topic_names)
        if self.subscribed_topic_regex in resolved_regexes:
            pattern = re.compile(self.subscribed_topic_regex)
            allowed = self.regex_filter or (lambda _: True)
            topics.update(name for name in existing if pattern.fullmatch(name) and allowed(name))
        return topics

    def next_deadline(self) -> int:
        """The earliest of its session, rebalance and classic deadlines."""
        return min(d for d in (self.session_deadline, self.rebalance_deadline, self.classic_deadline) if d is not None)

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch

    def owned_partitions(self) -> set[tuple[uuid.UUID, int]]:
        """Partitions the group counts as this member's: assigned or still to be revoked."""
        return partitions_of(self.assigned) | partitions_of(self.pending_revocation)


@dataclass
class ConsumerGroup:
    group_id: str
    state_timestamp: int
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    target: dict[str, Assignment] = field(default_factory=dict)
    owners: dict[tuple[uuid.UUID, int], int] = field(default_factory=dict)
    subscription_metadata: dict[str, tuple[uuid.UUID, int]] = field(default_factory=dict)
    resolved_regexes: set[str] = field(default_factory=set)  # in memory; every member's regex at load
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)
    dead: bool = False
    # The console's history, as a classic group's: each state change or new group epoch
    # (recorded by the coordinator when it installs a changed group).
    transitions: deque = field(default_factory=lambda: deque(maxlen=MAX_TRANSITIONS_KEPT))

    protocol_type = "consumer"  # as ListGroups/DescribeGroups report a consumer group's protocol type
    group_type = "consumer"  # ListGroups v5

    @property
    def state(self) -> ConsumerGroupState:
        if self.dead:
            return ConsumerGroupState.DEAD
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def is_(self, *states: ConsumerGroupState) -> bool:
        return self.state in states

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    # --- regular expressions (Kafka's resolvedRegularExpressions) ----------------------------

    def regexes_in_use(self) -> set[str]:
        return {m.subscribed_topic_regex for m in self.members.values() if m.subscribed_topic_regex}

    def resolve_pending_regexes(self) -> set[str]:
        """Resolve the regexes earlier heartbeats brought (Kafka's asynchronous resolution has
        finished by the group's next heartbeat); the ones newly resolved."""
        pending = self.regexes_in_use() - self.resolved_regexes
        self.resolved_regexes |= pending
        return pending

    def _forget_unused_regexes(self) -> None:
        self.resolved_regexes &= self.regexes_in_use()

    # --- membership -----------------------------------------------------------------------

    def put(self, member: ConsumerMember) -> None:
        """Add or update a member, keeping the partition owners in step."""
        old = self.members.get(member.member_id)
        if old is not None:
            self._release(old)
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        for tp in member.owned_partitions():
            self.owners[tp] = member.member_epoch
        self._forget_unused_regexes()

    def remove(self, member_id: str) -> ConsumerMember:
        member = self.members.pop(member_id)
        self._release(member)
        self._forget_unused_regexes()
        self.target.pop(member_id, None)
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member_id:
            del self.static_members[member.instance_id]
        return member

    def replace_static_member(self, old_id: str, new: ConsumerMember) -> None:
        """A static member rejoined under a new member id: it takes over the old one's target."""
        target = self.target.pop(old_id, None)
        resolved = set(self.resolved_regexes)  # the instance keeps its regex's resolution
        self.remove(old_id)
        if target is not None:
            self.target[new.member_id] = target
        self.put(new)
        self.resolved_regexes = resolved & self.regexes_in_use()

    def _release(self, member: ConsumerMember) -> None:
        for tp in member.owned_partitions():
            self.owners.pop(tp, None)

    def partition_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        """The epoch of the member owning the partition, -1 if it is free."""
        return self.owners.get((topic_id, partition), -1)

    def validate_offset_commit(self, member_id: str, member_epoch: int) -> ErrorCode:
        """The core of Kafka's ConsumerGroup.validateOffsetCommit: a negative epoch on an empty
        group is an admin (or manually assigned) commit; otherwise an unknown member is
        UNKNOWN_MEMBER_ID and an epoch other than the member's current one STALE_MEMBER_EPOCH.
        (Kafka also refuses OffsetCommit below v9 from a member of this protocol with
        UNSUPPORTED_VERSION; that check belongs to the OffsetCommit handler.)"""
        if member_epoch < 0 and not self.members:
            return ErrorCode.NONE
        member = self.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member_epoch != member.member_epoch:
            # a classic member commits with its generation, which is its member epoch
            return ErrorCode.ILLEGAL_GENERATION if member.uses_classic_protocol else ErrorCode.STALE_MEMBER_EPOCH
        return ErrorCode.NONE

    def uses_only_classic_protocol(self) -> bool:
        return bool(self.members) and all(m.uses_classic_protocol for m in self.members.values())
