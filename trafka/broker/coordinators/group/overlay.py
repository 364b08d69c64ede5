"""Copies of the groups an operation changes, installed only once its records are written.

A ConsumerGroupHeartbeat (or the timer fencing members) changes a KIP-848 group in many small
steps: members, epochs, the target assignment. The consumer-group manager runs over a
`GroupOverlay` instead of the coordinator's maps: a consumer group it reads is a deep copy, one
it creates or deletes is noted, and a classic group it reads is the real one, which it may only
delete (an empty classic group becoming a consumer group). The coordinator then writes, group
by group, the records that turn what was written into the copy, and `install`s the copy after
the append; a failed append drops the copy and the group is as it was.
"""

from __future__ import annotations

import copy
from collections.abc import MutableMapping
from typing import Iterator

_GONE = object()


class _ConsumerGroups(MutableMapping):
    def __init__(self, base):
        self.base = base
        self.changed: dict = {}  # group id -> copy, or _GONE

    def __getitem__(self, group_id):
        value = self.changed.get(group_id)
        if value is _GONE:
            raise KeyError(group_id)
        if value is None:
            value = self.changed[group_id] = copy.deepcopy(self.base[group_id])
        return value

    def __setitem__(self, group_id, value) -> None:
        self.changed[group_id] = value

    def __delitem__(self, group_id) -> None:
        self[group_id]  # KeyError when absent
        self.changed[group_id] = _GONE

    def __contains__(self, group_id) -> bool:
        value = self.changed.get(group_id)
        return value is not _GONE and (value is not None or group_id in self.base)

    def __iter__(self) -> Iterator:
        yield from (g for g in self.base if self.changed.get(g) is not _GONE)
        yield from (g for g, v in self.changed.items() if v is not _GONE and g not in self.base)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _ClassicGroups(MutableMapping):
    def __init__(self, base):
        self.base = base
        self.deleted: set = set()

    def __getitem__(self, group_id):
        if group_id in self.deleted:
            raise KeyError(group_id)
        return self.base[group_id]

    def __setitem__(self, group_id, value) -> None:
        raise TypeError("a consumer-group operation does not create classic groups")

    def __delitem__(self, group_id) -> None:
        self[group_id]
        self.deleted.add(group_id)

    def __contains__(self, group_id) -> bool:
        return group_id not in self.deleted and group_id in self.base

    def __iter__(self) -> Iterator:
        return (g for g in self.base if g not in self.deleted)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class GroupOverlay:
    def __init__(self, coordinator):
        self.coordinator = coordinator
        self.consumer_groups = _ConsumerGroups(coordinator.consumer_groups)
        self.groups = _ClassicGroups(coordinator.groups)

    def touched(self) -> list[str]:
        return sorted({*self.consumer_groups.changed, *self.groups.deleted})

    def classic_deleted(self, group_id: str) -> bool:
        return group_id in self.groups.deleted

    def install(self, group_id: str) -> None:
        """Make the real maps what the overlay says for `group_id`."""
        if group_id in self.groups.deleted:
            del self.coordinator.groups[group_id]
        value = self.consumer_groups.changed.get(group_id)
        if value is _GONE:
            self.coordinator.consumer_groups.pop(group_id, None)
        elif value is not None:
            self.coordinator.consumer_groups[group_id] = value
