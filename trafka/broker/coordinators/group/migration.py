"""Online migration between the classic and the consumer group protocols (KIP-848), as Kafka's
GroupMetadataManager does it under `group.consumer.migration.policy` (bidirectional by default).

- Upgrade: the first ConsumerGroupHeartbeat to a non-empty classic group of protocol type
  "consumer" converts it to a consumer group (`upgrade`). Each classic member becomes a member of
  the consumer group that keeps speaking the classic protocol (`ClassicMetadata`): its member
  epoch is the classic generation, its assignment the one its SyncGroup gave it, its target that
  same assignment. The joining member then bumps the group epoch and the classic members learn
  from their next Heartbeat (REBALANCE_IN_PROGRESS) that they must rejoin (`hosted.py`).
- Downgrade: when the last member of the consumer protocol leaves (or is fenced) and only
  classic members remain, the group becomes a classic group again (`downgrade`): same members,
  generation = the group epoch, each with its current assignment, and a rebalance starts, so
  every member rejoins with JoinGroup as in any classic group.

Both keep the group's committed offsets. The records are Kafka's: the old group's records are
tombstoned and the new group's written, before the new group is installed.
"""

from __future__ import annotations

import logging

from trafka.broker.coordinators.group import formats
from trafka.broker.coordinators.group.consumer_group import (
    ClassicMetadata,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
    assignment_of,
)
from trafka.broker.coordinators.group.group import Group, GroupState, Member
from trafka.storage.errors import StorageError

log = logging.getLogger("trafka.coordinator")

CONSUMER_PROTOCOL_TYPE = "consumer"


def policy_allows(config, direction: str) -> bool:
    """`direction` is "upgrade" or "downgrade"."""
    return config["group.consumer.migration.policy"] in (direction, "bidirectional")


def upgrade_refusal(config, classic: Group) -> str | None:
    """Why a classic group cannot become a consumer group now (Kafka's validateOnlineUpgrade),
    or None."""
    if not policy_allows(config, "upgrade"):
        return "the online upgrade is disabled (group.consumer.migration.policy)"
    if classic.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return "the group does not use the consumer embedded protocol"
    if len(classic.members) > config["group.consumer.max.size"]:
        return "the group size exceeds the consumer group maximum size"
    for member in classic.members.values():
        if subscription_of(member.protocols) is None:
            return "the embedded consumer protocol of a member is malformed"
    return None


def upgrade(classic: Group, logs, now: int) -> ConsumerGroup:
    """The consumer group a classic group becomes (Kafka's ConsumerGroup.fromClassicGroup)."""
    group = ConsumerGroup(classic.group_id, now, group_epoch=classic.generation, assignment_epoch=classic.generation)
    group.offsets = classic.offsets
    for m in classic.members.values():
        protocols = _preferred_first(m.protocols, classic.protocol_name)
        _, subscription = subscription_of(protocols)
        assigned = _assignment_by_id(formats.assigned_partitions(m.assignment) or {}, logs) if m.assignment else {}
        member = ConsumerMember(
            m.member_id,
            instance_id=m.group_instance_id,
            rack_id=subscription.get("rack_id"),
            client_id=m.client_id,
            client_host=m.client_host,
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            subscribed_topic_names=tuple(sorted(set(subscription.topics))),
            member_epoch=classic.generation,
            previous_member_epoch=classic.generation,
            state=MemberState.STABLE,
            assigned=assigned,
            session_deadline=now + m.session_timeout_ms,
            classic=ClassicMetadata(m.session_timeout_ms, tuple(protocols)),
        )
        group.put(member)
        group.target[m.member_id] = assigned
    group.subscription_metadata = {
        name: (topic.topic_id, topic.partitions)
        for name in sorted({t for m in group.members.values() for t in m.subscribed_topic_names})
        if (topic := logs.topics.get(name)) is not None
    }
    log.info("group %s: classic group of %d members becomes a consumer group at epoch %d (online upgrade)",
             group.group_id, len(group.members), group.group_epoch)
    return group


def downgrade_refusal(config, group: ConsumerGroup) -> str | None:
    """Why a consumer group whose members all speak the classic protocol stays a consumer
    group (Kafka's validateOnlineDowngrade), or None to convert it."""
    if not group.uses_only_classic_protocol():
        return "a member uses the consumer protocol"
    if not policy_allows(config, "downgrade"):
        return "the online downgrade is disabled (group.consumer.migration.policy)"
    return None


def downgrade(group: ConsumerGroup, logs, now: int) -> Group:
    """The classic group a consumer group of classic members becomes (Kafka's
    ClassicGroup.fromConsumerGroup); the caller starts its rebalance."""
    classic = Group(group.group_id, now, offsets=group.offsets)
    classic.generation = group.group_epoch
    classic.protocol_type = CONSUMER_PROTOCOL_TYPE
    names = {topic_id: name for name, (topic_id, _) in group.subscription_metadata.items()}
    for m in group.members.values():
        version = (subscription_of(m.classic.protocols) or (0, None))[0]
        partitions = {_name(topic_id, names, logs): list(ps) for topic_id, ps in m.assigned.items()}
        classic.add(Member(
            m.member_id, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
            m.classic.session_timeout_ms, CONSUMER_PROTOCOL_TYPE, list(m.classic.protocols),
            assignment=formats.consumer_assignment({k: v for k, v in partitions.items() if k is not None}, version),
            heartbeat_deadline=now + m.classic.session_timeout_ms,
        ))
    classic.protocol_name = classic.select_protocol()
    classic.leader_id = next(iter(classic.members), None)
    classic.state = GroupState.STABLE  # as Kafka's fromConsumerGroup; the caller prepares the rebalance
    log.info("group %s: consumer group of %d classic members becomes a classic group at generation %d "
             "(online downgrade)", group.group_id, len(classic.members), classic.generation)
    return classic


def owned_by_id(subscription, logs) -> dict:
    """The subscription's owned partitions (v1+) as an Assignment by topic id."""
    owned = {}
    for entry in subscription.get("owned_partitions") or ():
        owned.setdefault(entry.topic, []).extend(entry.partitions)
    return _assignment_by_id(owned, logs)


def assignment_bytes(member: ConsumerMember, group: ConsumerGroup, logs) -> bytes:
    """The member's assigned partitions as its SyncGroup answer, in its subscription's version
    (Kafka's prepareAssignment)."""
    names = {topic_id: name for name, (topic_id, _) in group.subscription_metadata.items()}
    version = (subscription_of(member.classic.protocols) or (0, None))[0]
    partitions = {}
    for topic_id, ps in member.assigned.items():
        name = _name(topic_id, names, logs)
        if name is not None:
            partitions[name] = list(ps)
    return formats.consumer_assignment(partitions, version)


def subscription_of(protocols) -> tuple[int, object] | None:
    """(version, parsed) of the first protocol's consumer subscription; None if unreadable."""
    if not protocols:
        return None
    return formats.consumer_subscription(protocols[0][1])


def _preferred_first(protocols: list[tuple[str, bytes]], chosen: str | None) -> list[tuple[str, bytes]]:
    """The member's protocols with the group's chosen one first."""
    return sorted(protocols, key=lambda p: p[0] != chosen)


def _assignment_by_id(partitions: dict[str, list[int]], logs):
    pairs = []
    for name, ps in partitions.items():
        topic = logs.topics.get(name)
        if topic is not None:
            pairs.append((topic.topic_id, [p for p in ps if 0 <= p < topic.partitions]))
    return assignment_of(pairs)


def _name(topic_id, names: dict, logs) -> str | None:
    if topic_id in names:
        return names[topic_id]
    try:
        return logs.topic_by_id(topic_id).name
    except StorageError:  # a topic deleted since: its partitions are not named
        return None
