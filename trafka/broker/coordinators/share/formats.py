"""`__share_group_state` records: the durable state of each share-partition (KIP-932).

The key is the record type behind its int16 prefix, 0 = ShareSnapshot, keyed by (group id,
topic id, partition); the value (v0, flexible) holds the snapshot epoch, the state epoch, the
leader epoch, the share-partition start offset and the state batches: runs of offsets with
their delivery state (0 available, 2 acknowledged, 4 archived) and delivery count. A
tombstone drops the share-partition (its group was deleted). trafka writes whole snapshots
only (Kafka also writes ShareUpdate deltas, type 1, between snapshots).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from trafka.broker.coordinators.runtime.records import UnknownRecord, parse_versioned, split_version, versioned
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT8, INT16, INT32, INT64, STRING, UINT16, UUID

SHARE_SNAPSHOT = 0

SNAPSHOT_KEY = Message("ShareSnapshotKey", versions="0", flexible="none", fields=[
    Field("group_id", STRING),
    Field("topic_id", UUID),
    Field("partition", INT32),
])

SNAPSHOT_VALUE = Message("ShareSnapshotValue", versions="0", flexible="0+", fields=[
    Field("snapshot_epoch", UINT16),
    Field("state_epoch", INT32),
    Field("leader_epoch", INT32),
    Field("start_offset", INT64),
    Field("state_batches", Array([
        Field("first_offset", INT64),
        Field("last_offset", INT64),
        Field("delivery_state", INT8),
        Field("delivery_count", INT16),
    ])),
])


@dataclass(frozen=True)
class SharePartitionKey:
    group_id: str
    topic_id: uuid.UUID
    partition: int


@dataclass(frozen=True)
class ShareSnapshot:
    snapshot_epoch: int
    state_epoch: int
    start_offset: int
    batches: tuple[tuple[int, int, int, int], ...]  # (first, last, delivery state, delivery count)


def key(k: SharePartitionKey) -> bytes:
    return versioned(SNAPSHOT_KEY, SHARE_SNAPSHOT, {"group_id": k.group_id, "topic_id": k.topic_id, "partition": k.partition})


def value(s: ShareSnapshot) -> bytes:
    return versioned(SNAPSHOT_VALUE, 0, {
        "snapshot_epoch": s.snapshot_epoch & 0xFFFF, "state_epoch": s.state_epoch, "leader_epoch": 0,
        "start_offset": s.start_offset,
        "state_batches": [{"first_offset": f, "last_offset": last, "delivery_state": st, "delivery_count": c}
                          for f, last, st, c in s.batches],
    })


def parse_key(data: bytes) -> SharePartitionKey:
    record_type, _ = split_version(data, "share state key")
    if record_type != SHARE_SNAPSHOT:
        raise UnknownRecord(f"share state record type {record_type} is not known here")
    k = parse_versioned(data, SNAPSHOT_KEY)
    return SharePartitionKey(k.group_id, k.topic_id, k.partition)


def parse_value(data: bytes) -> ShareSnapshot:
    v = parse_versioned(data, SNAPSHOT_VALUE)
    return ShareSnapshot(v.snapshot_epoch, v.state_epoch, v.start_offset,
                         tuple((b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in v.state_batches))
