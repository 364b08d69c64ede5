"""A history checker for what Kafka clients saw, the checks Jepsen's Kafka workload makes.

Record what your producers had acknowledged and what your consumers read (and, for
read_committed, which values were written in aborted transactions, and the offsets your groups
committed), then `check()`:

    history = History()
    history.produced("orders", 0, 41, b"order-17")        # from the delivery report
    history.consumed("reader-1", "orders", 0, 41, b"order-17")
    history.committed("billing", "orders", 0, 42)
    report = history.check()
    assert report.ok, report.summary()

What it reports (each a list of small dicts, first examples in `summary()`):
- lost: an acknowledged record nobody read, though a consumer read past its offset;
- unseen: an acknowledged record nobody read, with nothing read past it (the consumers may
  simply not have got there; not counted against `ok`);
- changed: a read whose value is not what was acknowledged at that offset, or two reads of one
  offset with different values;
- duplicated: one value at more than one offset (acknowledged or read twice);
- out_of_order: a consumer reading an offset of a partition at or before one it read before;
- skipped: a consumer jumping over offsets of a partition that hold acknowledged records it
  never read (a poll skip: expected across a reassignment, so record each assignment as its own
  consumer name to check it; not counted against `ok`);
- aborted_read: a value written in an aborted transaction, read by a read_committed consumer;
- offsets_went_back: a group's committed offset of a partition lower than one it committed before.

Values are compared as given (bytes or str); a value should be unique per record, as Jepsen's
workloads make them, for `duplicated` to mean anything.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

Position = tuple[str, int, int]  # topic, partition, offset


@dataclass
class HistoryReport:
    lost: list[dict] = field(default_factory=list)
    unseen: list[dict] = field(default_factory=list)
    changed: list[dict] = field(default_factory=list)
    duplicated: list[dict] = field(default_factory=list)
    out_of_order: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    aborted_read: list[dict] = field(default_factory=list)
    offsets_went_back: list[dict] = field(default_factory=list)
    acknowledged: int = 0
    read: int = 0

    FAILURES = ("lost", "changed", "duplicated", "out_of_order", "aborted_read", "offsets_went_back")

    @property
    def ok(self) -> bool:
        return not any(getattr(self, name) for name in self.FAILURES)

    def summary(self, examples: int = 3) -> str:
        lines = [f"{self.acknowledged} acknowledged, {self.read} read: {'ok' if self.ok else 'NOT OK'}"]
        for name in (*self.FAILURES, "unseen", "skipped"):
            found = getattr(self, name)
            if found:
                lines.append(f"  {name}: {len(found)}, e.g. {found[:examples]}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"ok": self.ok, "acknowledged": self.acknowledged, "read": self.read,
                **{name: getattr(self, name) for name in (*self.FAILURES, "unseen", "skipped")}}


class History:
    """What clients saw, recorded from any thread; `check()` judges it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._acked: list[tuple[Position, object]] = []
        self._reads: dict[str, list[tuple[Position, object]]] = {}
        self._commits: list[tuple[str, str, int, int]] = []
        self._aborted: set = set()

    def produced(self, topic: str, partition: int, offset: int, value) -> None:
        """A record the broker acknowledged at that offset."""
        with self._lock:
            self._acked.append(((topic, partition, offset), value))

    def consumed(self, consumer: str, topic: str, partition: int, offset: int, value) -> None:
        """A record `consumer` read, in the order it read them."""
        with self._lock:
            self._reads.setdefault(consumer, []).append(((topic, partition, offset), value))

    def committed(self, group: str, topic: str, partition: int, offset: int) -> None:
        """An offset commit the broker acknowledged, in the order they were acknowledged."""
        with self._lock:
            self._commits.append((group, topic, partition, offset))

    def aborted(self, value) -> None:
        """A value written in a transaction that was aborted."""
        with self._lock:
            self._aborted.add(value)

    def acknowledged(self) -> list[tuple[Position, object]]:
        """What was recorded as acknowledged so far: ((topic, partition, offset), value)."""
        with self._lock:
            return list(self._acked)

    def check(self, *, read_committed: bool = False) -> HistoryReport:
        with self._lock:
            return check_history(list(self._acked), {c: list(r) for c, r in self._reads.items()},
                                 committed_offsets=list(self._commits), aborted=set(self._aborted),
                                 read_committed=read_committed)


def check_history(acked, reads, *, committed_offsets=(), aborted=(), read_committed: bool = False) -> HistoryReport:
    """The checks on plain data: `acked` [((topic, partition, offset), value)], `reads`
    {consumer: [((topic, partition, offset), value)] in read order}, `committed_offsets`
    [(group, topic, partition, offset)] in commit order, `aborted` values."""
    report = HistoryReport(acknowledged=len(acked), read=sum(len(r) for r in reads.values()))
    acked_at: dict[Position, object] = {}
    for position, value in acked:
        if position in acked_at and acked_at[position] != value:
            report.changed.append({"position": position, "acknowledged": [acked_at[position], value]})
        acked_at[position] = value
    read_at: dict[Position, object] = {}
    furthest: dict[tuple[str, int], int] = {}
    for consumer, sequence in reads.items():
        last: dict[tuple[str, int], int] = {}
        read_here: set[Position] = {position for position, _ in sequence}
        for position, value in sequence:
            topic, partition, offset = position
            tp = (topic, partition)
            if position in acked_at and acked_at[position] != value:
                report.changed.append({"position": position, "acknowledged": acked_at[position], "read": value,
                                       "consumer": consumer})
            elif position in read_at and read_at[position] != value:
                report.changed.append({"position": position, "read": [read_at[position], value], "consumer": consumer})
            read_at.setdefault(position, value)
            if read_committed and value in aborted:
                report.aborted_read.append({"position": position, "value": value, "consumer": consumer})
            previous = last.get(tp)
            if previous is not None and offset <= previous:
                report.out_of_order.append({"consumer": consumer, "topic": topic, "partition": partition,
                                            "offset": offset, "after": previous})
            elif previous is not None and offset > previous + 1:
                jumped = [o for o in range(previous + 1, offset) if (topic, partition, o) in acked_at
                          and (topic, partition, o) not in read_here]
                if jumped:
                    report.skipped.append({"consumer": consumer, "topic": topic, "partition": partition,
                                           "from": previous, "to": offset, "acknowledged_between": len(jumped)})
            last[tp] = max(offset, previous if previous is not None else offset)
            furthest[tp] = max(furthest.get(tp, -1), offset)
    read_values = set(read_at.values())
    for position, value in sorted(acked, key=lambda entry: entry[0]):
        if value in read_values:
            continue
        topic, partition, offset = position
        entry = {"position": position, "value": value}
        (report.lost if furthest.get((topic, partition), -1) > offset else report.unseen).append(entry)
    where: dict[object, set[Position]] = {}
    for position, value in [*acked, *read_at.items()]:
        where.setdefault(value, set()).add(position)
    report.duplicated = [{"value": value, "positions": sorted(positions)} for value, positions in where.items()
                         if len(positions) > 1]
    last_commit: dict[tuple[str, str, int], int] = {}
    for group, topic, partition, offset in committed_offsets:
        key = (group, topic, partition)
        if key in last_commit and offset < last_commit[key]:
            report.offsets_went_back.append({"group": group, "topic": topic, "partition": partition,
                                             "offset": offset, "after": last_commit[key]})
        last_commit[key] = max(offset, last_commit.get(key, offset))
    return report
