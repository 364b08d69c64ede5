"""`__share_group_state` records: the durable state of each share-partition (KIP-932).

The key is the record type behind its int16 prefix, keyed by (group id, topic id, partition):
- 0 = ShareSnapshot: the value (v0, flexible) holds the snapshot epoch, the state epoch, the
  leader epoch, the share-partition start offset and the state batches: runs of offsets with
  their delivery state (0 available, 2 acknowledged, 4 archived) and delivery count. The
  whole state.
- 1 = ShareUpdate: the value (v0, flexible) holds the snapshot epoch of the snapshot it
  follows, the leader epoch, the new start offset and only the state batches that changed.
  Replay merges it into the state so far (`combine`).
A tombstone (of either key) drops the share-partition (its group or topic was deleted).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from trafka.broker.coordinators.runtime.records import UnknownRecord, parse_versioned, split_version, versioned
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT8, INT16, INT32, INT64, STRING, UINT16, UUID

SHARE_SNAPSHOT = 0
SHARE_UPDATE = 1

# Both keys are (group id, topic id, partition), both values hold state batches.
def _key_message(name: str, version: str) -> Message:
    return Message(name, versions=version, flexible="none", fields=[
        Field("group_id", STRING),
        Field("topic_id", UUID),
        Field("partition", INT32),
    ])


def _state_batches() -> Field:
    return Field("state_batches", Array([
        Field("first_offset", INT64),
        Field("last_offset", INT64),
        Field("delivery_state", INT8),
        Field("delivery_count", INT16),
    ]))


SNAPSHOT_KEY = _key_message("ShareSnapshotKey", "0")
UPDATE_KEY = _key_message("ShareUpdateKey", "1")

SNAPSHOT_VALUE = Message("ShareSnapshotValue", versions="0", flexible="0+", fields=[
    Field("snapshot_epoch", UINT16),
    Field("state_epoch", INT32),
    Field("leader_epoch", INT32),
    Field("start_offset", INT64),
    _state_batches(),
])

UPDATE_VALUE = Message("ShareUpdateValue", versions="0", flexible="0+", fields=[
    Field("snapshot_epoch", UINT16),
    Field("leader_epoch", INT32),
    Field("start_offset", INT64),
    _state_batches(),
])

Batch = tuple[int, int, int, int]  # (first offset, last offset, delivery state, delivery count)


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
    batches: tuple[Batch, ...]


@dataclass(frozen=True)
class ShareUpdate:
    snapshot_epoch: int  # the snapshot's it follows
    start_offset: int
    batches: tuple[Batch, ...]  # only those that changed


def _key_fields(k: SharePartitionKey) -> dict:
    return {"group_id": k.group_id, "topic_id": k.topic_id, "partition": k.partition}


def _batch_fields(batches) -> list[dict]:
    return [{"first_offset": f, "last_offset": last, "delivery_state": st, "delivery_count": c}
            for f, last, st, c in batches]


def key(k: SharePartitionKey) -> bytes:
    return versioned(SNAPSHOT_KEY, SHARE_SNAPSHOT, _key_fields(k))


def update_key(k: SharePartitionKey) -> bytes:
    return versioned(UPDATE_KEY, SHARE_UPDATE, _key_fields(k))


def value(s: ShareSnapshot) -> bytes:
    return versioned(SNAPSHOT_VALUE, 0, {
        "snapshot_epoch": s.snapshot_epoch & 0xFFFF, "state_epoch": s.state_epoch, "leader_epoch": 0,
        "start_offset": s.start_offset, "state_batches": _batch_fields(s.batches),
    })


def update_value(u: ShareUpdate) -> bytes:
    return versioned(UPDATE_VALUE, 0, {
        "snapshot_epoch": u.snapshot_epoch & 0xFFFF, "leader_epoch": 0, "start_offset": u.start_offset,
        "state_batches": _batch_fields(u.batches),
    })


def parse_key(data: bytes) -> tuple[int, SharePartitionKey]:
    """(record type, key): SHARE_SNAPSHOT or SHARE_UPDATE."""
    record_type, _ = split_version(data, "share state key")
    if record_type == SHARE_SNAPSHOT:
        k = parse_versioned(data, SNAPSHOT_KEY)
    elif record_type == SHARE_UPDATE:
        k = parse_versioned(data, UPDATE_KEY)
    else:
        raise UnknownRecord(f"share state record type {record_type} is not known here")
    return record_type, SharePartitionKey(k.group_id, k.topic_id, k.partition)


def _batches(v) -> tuple[Batch, ...]:
    return tuple((b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in v.state_batches)


def parse_value(data: bytes) -> ShareSnapshot:
    v = parse_versioned(data, SNAPSHOT_VALUE)
    return ShareSnapshot(v.snapshot_epoch, v.state_epoch, v.start_offset, _batches(v))


def parse_update(data: bytes) -> ShareUpdate:
    v = parse_versioned(data, UPDATE_VALUE)
    return ShareUpdate(v.snapshot_epoch, v.start_offset, _batches(v))


# --- state batches as runs ------------------------------------------------------------------
# State batches are runs of offsets in one state with one delivery count. The functions below
# take and give them sorted and non-overlapping; an offset in no batch (at or past the start
# offset) is AVAILABLE with a delivery count of 0, as a never-delivered record is.

_NEVER = (0, 0)  # (delivery state AVAILABLE, delivery count 0): what an offset in no batch is


def _coalesced(batches) -> list[Batch]:
    out: list[Batch] = []
    for first, last, state, count in batches:
        if out and out[-1][1] + 1 == first and out[-1][2:] == (state, count):
            out[-1] = (out[-1][0], last, state, count)
        else:
            out.append((first, last, state, count))
    return out


def _pieces(older, newer, start: int):
    """(first, last, older's (state, count), newer's) over each run of offsets at or past
    `start` where neither side changes; a side with no batch there gives None."""
    def runs(batches):
        return [(max(f, start), l, st, c) for f, l, st, c in sorted(batches) if l >= start]
    older, newer = runs(older), runs(newer)
    # Every boundary of either side cuts the range into pieces with one state on each side.
    cuts = sorted({f for f, *_ in older + newer} | {l + 1 for _, l, *_ in older + newer})
    i = j = 0
    for lo, hi in zip(cuts, cuts[1:]):
        while i < len(older) and older[i][1] < lo:
            i += 1
        while j < len(newer) and newer[j][1] < lo:
            j += 1
        yield (lo, hi - 1, older[i][2:] if i < len(older) and older[i][0] <= lo else None,
               newer[j][2:] if j < len(newer) and newer[j][0] <= lo else None)


def combine(batches, newer, start: int) -> list[Batch]:
    """Kafka's PersisterStateBatchCombiner: `newer` laid over `batches` (newer wins where they
    overlap), offsets below `start` dropped, neighbours in one state and count joined."""
    return _coalesced((lo, hi, *(now or was)) for lo, hi, was, now in _pieces(batches, newer, start) if now or was)


def changed(written, batches, start: int) -> list[Batch]:
    """The state batches of `batches` (the whole state now) that differ from `written` (the
    state as last written) at or past `start`: what a ShareUpdate carries, so that
    combine(written, changed(...), start) is the state now. An offset `written` has and
    `batches` has not is written back as never delivered."""
    return _coalesced((lo, hi, *(now or _NEVER)) for lo, hi, was, now in _pieces(written, batches, start)
                      if (was or _NEVER) != (now or _NEVER))
