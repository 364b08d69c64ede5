"""Record formats the coordinator reads and writes, declared with our schema DSL.

Kafka's own layout, so a Kafka tool reading our log (or we reading theirs) agrees on every
byte. A key and a value are each an int16 version followed by the struct of that version:

- key v0/v1: an offset commit, keyed by (group, topic, partition); value `OffsetCommitValue`
  (we write v3: offset, leader epoch, metadata, commit timestamp).
- key v2: group metadata, keyed by group; value `GroupMetadataValue` (we write v3).
- keys 3-8: a KIP-848 consumer group's records, declared in `consumer_records`.

A null value is a tombstone: the key's offset or group is deleted. Compaction keeps the
latest record per key, so the log replayed in order is the coordinator's state.
"""

from __future__ import annotations

from dataclasses import dataclass

from trafka.broker.coordinators.group import consumer_records
from trafka.broker.coordinators.share import group_records as share_records
from trafka.broker.coordinators.runtime.records import UnknownRecord, parse_versioned, split_version, versioned
from trafka.wire.schema import Array, Field, MalformedMessage, Message
from trafka.wire.types import BYTES, INT32, INT64, STRING

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
OFFSET_COMMIT_VALUE_VERSION = 3
GROUP_METADATA_VALUE_VERSION = 3

OFFSET_COMMIT_KEY = Message(
    "OffsetCommitKey",
    versions="0-1",
    flexible="none",
    fields=[
        Field("group", STRING),
        Field("topic", STRING),
        Field("partition", INT32),
    ],
)

GROUP_METADATA_KEY = Message(
    "GroupMetadataKey",
    versions="2",
    flexible="none",
    fields=[Field("group", STRING)],
)

OFFSET_COMMIT_VALUE = Message(
    "OffsetCommitValue",
    versions="0-4",
    flexible="4+",
    fields=[
        Field("offset", INT64),
        Field("leader_epoch", INT32, "3+", default=-1),
        Field("metadata", STRING),
        Field("commit_timestamp", INT64),
        Field("expire_timestamp", INT64, "1", default=-1),
    ],
)

GROUP_METADATA_VALUE = Message(
    "GroupMetadataValue",
    versions="0-4",
    flexible="4+",
    fields=[
        Field("protocol_type", STRING),
        Field("generation", INT32),
        Field("protocol", STRING, nullable="0+"),
        Field("leader", STRING, nullable="0+"),
        Field("current_state_timestamp", INT64, "2+", default=-1),
        Field(
            "members",
            Array([
                Field("member_id", STRING),
                Field("group_instance_id", STRING, "3+", nullable="3+"),
                Field("client_id", STRING),
                Field("client_host", STRING),
                Field("rebalance_timeout", INT32, "1+", default=-1),
                Field("session_timeout", INT32),
                Field("subscription", BYTES),
                Field("assignment", BYTES),
            ]),
        ),
    ],
)



@dataclass(frozen=True)
class OffsetKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class GroupKey:
    group: str


@dataclass(frozen=True)
class CommittedOffset:
    offset: int  # the next offset to read
    leader_epoch: int
    metadata: str
    commit_timestamp: int


@dataclass(frozen=True)
class GroupMemberRecord:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupRecord:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: tuple[GroupMemberRecord, ...]


def offset_key(key: OffsetKey) -> bytes:
    return versioned(OFFSET_COMMIT_KEY, OFFSET_COMMIT_KEY_VERSION, {"group": key.group, "topic": key.topic, "partition": key.partition})


def group_key(key: GroupKey) -> bytes:
    return versioned(GROUP_METADATA_KEY, GROUP_METADATA_KEY_VERSION, {"group": key.group})


def offset_value(value: CommittedOffset) -> bytes:
    return versioned(OFFSET_COMMIT_VALUE, OFFSET_COMMIT_VALUE_VERSION, {
        "offset": value.offset,
        "leader_epoch": value.leader_epoch,
        "metadata": value.metadata,
        "commit_timestamp": value.commit_timestamp,
    })


def group_value(value: GroupRecord) -> bytes:
    return versioned(GROUP_METADATA_VALUE, GROUP_METADATA_VALUE_VERSION, {
        "protocol_type": value.protocol_type,
        "generation": value.generation,
        "protocol": value.protocol,
        "leader": value.leader,
        "current_state_timestamp": value.current_state_timestamp,
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "rebalance_timeout": m.rebalance_timeout_ms,
                "session_timeout": m.session_timeout_ms,
                "subscription": m.subscription,
                "assignment": m.assignment,
            }
            for m in value.members
        ],
    })


def parse_key(data: bytes) -> OffsetKey | GroupKey | consumer_records.ConsumerGroupRecordKey | share_records.ShareGroupRecordKey:
    """An offset commit key, a classic group metadata key, one of a KIP-848 consumer group's
    record keys (types 3-8, `consumer_records`) or one of a share group's (10-14,
    trafka/broker/coordinators/share/group_records.py)."""
    version, _ = split_version(data, "key")
    if version in OFFSET_COMMIT_KEY.version_range:
        body = parse_versioned(data, OFFSET_COMMIT_KEY)
        return OffsetKey(body.group, body.topic, body.partition)
    if version in GROUP_METADATA_KEY.version_range:
        return GroupKey(parse_versioned(data, GROUP_METADATA_KEY).group)
    if version in consumer_records.RECORD_TYPES:
        return consumer_records.parse_key(data)
    if version in share_records.RECORD_TYPES:
        return share_records.parse_key(data)
    raise UnknownRecord(f"key version {version} is not an offset commit, group metadata, consumer or share group key")


def parse_offset_value(data: bytes) -> CommittedOffset:
    v = parse_versioned(data, OFFSET_COMMIT_VALUE)
    return CommittedOffset(v.offset, v.leader_epoch, v.metadata, v.commit_timestamp)


def parse_group_value(data: bytes) -> GroupRecord:
    version, _ = split_version(data, GROUP_METADATA_VALUE.name)
    v = parse_versioned(data, GROUP_METADATA_VALUE)
    members = tuple(
        GroupMemberRecord(
            m.member_id,
            m.group_instance_id,
            m.client_id,
            m.client_host,
            # v0 had no rebalance timeout: the session timeout served as both.
            m.session_timeout if version < 1 else m.rebalance_timeout,
            m.session_timeout,
            m.subscription,
            m.assignment,
        )
        for m in v.members
    )
    return GroupRecord(v.protocol_type, v.generation, v.protocol, v.leader, v.current_state_timestamp, members)


# The consumer protocol's subscription (JoinGroup metadata of protocol type "consumer") and
# assignment (SyncGroup's per-member bytes). The coordinator reads only the subscription's
# topics, to refuse OffsetDelete on topics the group consumes; `trafka groups` shows both.
CONSUMER_PROTOCOL_SUBSCRIPTION = Message(
    "ConsumerProtocolSubscription",
    versions="0-3",
    flexible="none",
    fields=[
        Field("topics", Array(STRING)),
        Field("user_data", BYTES, nullable="0+"),
        Field("owned_partitions", Array([Field("topic", STRING), Field("partitions", Array(INT32))]), "1+"),
        Field("generation_id", INT32, "2+", default=-1),
        Field("rack_id", STRING, "3+", nullable="3+"),
    ],
)

CONSUMER_PROTOCOL_ASSIGNMENT = Message(
    "ConsumerProtocolAssignment",
    versions="0-3",
    flexible="none",
    fields=[
        Field("assigned_partitions", Array([Field("topic", STRING), Field("partitions", Array(INT32))])),
        Field("user_data", BYTES, nullable="0+"),
    ],
)


def _parse_consumer_protocol(message: Message, data: bytes):
    """The parsed body of versioned consumer-protocol bytes; None when they cannot be read."""
    # Newer versions only append fields: read them as the newest version we know.
    try:
        return parse_versioned(data, message, newer_as_newest=True)
    except UnknownRecord:
        return None


def subscribed_topics(metadata: bytes) -> set[str] | None:
    """The topics of a consumer subscription; None when it cannot be read. Read as version 0,
    the prefix of every version, as Kafka's ClassicGroup does: a subscription marked with a
    later version but carrying only the version-0 fields (@platformatic/kafka's) still names
    its topics."""
    try:
        _, body = split_version(metadata, CONSUMER_PROTOCOL_SUBSCRIPTION.name)
        return set(CONSUMER_PROTOCOL_SUBSCRIPTION.parse_checked(body, 0).topics)
    except (UnknownRecord, MalformedMessage):
        return None


def assigned_partitions(assignment: bytes) -> dict[str, list[int]] | None:
    """Topic -> partitions of a consumer assignment; None when it cannot be read."""
    parsed = _parse_consumer_protocol(CONSUMER_PROTOCOL_ASSIGNMENT, assignment)
    if parsed is None:
        return None
    partitions: dict[str, list[int]] = {}
    for entry in parsed.assigned_partitions:
        partitions.setdefault(entry.topic, []).extend(entry.partitions)
    return partitions


def consumer_subscription(metadata: bytes):
    """A consumer subscription's fields (topics, owned_partitions, rack_id...) and its version,
    as (version, parsed); None when it cannot be read."""
    parsed = _parse_consumer_protocol(CONSUMER_PROTOCOL_SUBSCRIPTION, metadata)
    if parsed is None:
        return None
    version, _ = split_version(metadata, CONSUMER_PROTOCOL_SUBSCRIPTION.name)
    return version, parsed


def consumer_assignment(partitions: dict[str, list[int]], version: int) -> bytes:
    """A consumer assignment (SyncGroup's bytes) of topic -> partitions, written in `version`
    (the member's subscription version, at most the newest declared), as Kafka's
    ConsumerProtocol.serializeAssignment."""
    version = max(0, min(version, CONSUMER_PROTOCOL_ASSIGNMENT.version_range.hi))
    return versioned(CONSUMER_PROTOCOL_ASSIGNMENT, version, {
        "assigned_partitions": [{"topic": t, "partitions": sorted(ps)} for t, ps in sorted(partitions.items())],
        "user_data": None,
    })
