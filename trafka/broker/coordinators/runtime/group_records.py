"""Typed group records: how Kafka's group coordinator keys the records of a KIP-848 consumer
group (types 3-8) and of a share group (types 10-14) in `__consumer_offsets`.

A key is an int16 record type followed by the group id and, for per-member types, the member
id; a value is an int16 version followed by a flexible struct. A group's records are kept as
the values last written per (record type, member id or None); a change is written as the
difference between those and the values the changed group needs (`GroupRecordLayout.changes`),
in Kafka's order: members' records, then the group's; on the way out members first, the group
last. coordinator/consumer_records.py and share/group_records.py each declare one layout.
"""

from __future__ import annotations

from dataclasses import dataclass

from trafka.broker.coordinators.runtime.records import parse_versioned, split_version, versioned
from trafka.wire.schema import Message

RecordId = tuple[int, str | None]  # (record type, member id or None)


@dataclass(frozen=True)
class GroupRecordKey:
    """The key of one of a group's typed records: its type, the group and, for the per-member
    types, the member id."""

    record_type: int
    group: str
    member_id: str | None = None


class GroupRecordLayout:
    def __init__(self, keys: dict[int, Message], key_type: type[GroupRecordKey], upsert_order: tuple[int, ...],
                 tombstone_order: tuple[int, ...]):
        self.keys = keys
        self.key_type = key_type
        self.record_types = range(min(keys), max(keys) + 1)
        self.upsert_order = upsert_order
        self.tombstone_order = tombstone_order

    def key(self, record_type: int, group: str, member_id: str | None = None) -> bytes:
        fields = {"group": group} if member_id is None else {"group": group, "member_id": member_id}
        return versioned(self.keys[record_type], record_type, fields)

    def parse_key(self, data: bytes) -> GroupRecordKey:
        """A key whose version is its record type; UnknownRecord when it cannot be read."""
        record_type, _ = split_version(data, self.key_type.__name__)
        parsed = parse_versioned(data, self.keys[record_type])
        return self.key_type(record_type, parsed.group, parsed.get("member_id"))

    def changes(self, group_id: str, written: dict[RecordId, bytes],
                wanted: dict[RecordId, bytes]) -> list[tuple[bytes, bytes | None]]:
        """The (key, value) records that turn what was written into what is wanted."""
        gone = [rid for rid in written if rid not in wanted]
        changed = [rid for rid, value in wanted.items() if written.get(rid) != value]

        def order(ids: list[RecordId], types: tuple[int, ...]) -> list[RecordId]:
            return sorted(ids, key=lambda rid: (types.index(rid[0]), rid[1] or ""))

        def entries(ids: list[RecordId], types: tuple[int, ...], values) -> list[tuple[bytes, bytes | None]]:
            return [(self.key(t, group_id, m), values.get((t, m))) for t, m in order(ids, types)]

        return (entries([r for r in gone if r[1] is not None], self.tombstone_order, {})
                + entries(changed, self.upsert_order, wanted)
                + entries([r for r in gone if r[1] is None], self.tombstone_order, {}))


def apply(values: dict[RecordId, bytes], key: GroupRecordKey, value: bytes | None) -> None:
    """One replayed record into a group's latest values (a tombstone removes)."""
    rid = (key.record_type, key.member_id)
    if value is None:
        values.pop(rid, None)
    else:
        values[rid] = value
