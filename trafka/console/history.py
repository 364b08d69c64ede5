"""What the console remembers over time: each group's rebalances since the broker started,
and requests per second per API.

A sampler looks at the group coordinator and the request counters every `SAMPLE_SECONDS` (on
the broker's trio thread) instead of hooking into the coordinator: a new generation is a
completed rebalance, and state changes between samples are recorded as seen.
"""

from __future__ import annotations

import time
import weakref
from collections import deque

import trio

SAMPLE_SECONDS = 0.2
RATE_WINDOW_SECONDS = 5.0
MAX_EVENTS = 100  # per group


class ConsoleHistory:
    def __init__(self):
        self.groups: dict[str, deque] = {}
        self._seen: dict[str, tuple] = {}
        self._counts: deque = deque()  # (monotonic time, {api: count})

    def sample(self, broker) -> None:
        now_ms = broker.clock.time_ms()
        for group_id, group in list(broker.group_coordinator.groups.items()):
            members = sorted(m.client_id + "/" + m.member_id for m in group.members.values())
            key = (group.state.value, group.generation)
            if self._seen.get(group_id, (None, None))[:2] == key:
                continue
            previous = self._seen.get(group_id)
            self._seen[group_id] = (*key, members)
            events = self.groups.setdefault(group_id, deque(maxlen=MAX_EVENTS))
            events.append({
                "time_ms": now_ms,
                "state": group.state.value,
                "generation": group.generation,
                "previous_state": previous[0] if previous else None,
                "rebalance": previous is not None and group.generation != previous[1],
                "protocol": group.protocol_name,
                "leader": group.leader_id,
                "members": [m.split("/", 1)[0] for m in members],
                "member_count": len(members),
            })
        for gone in set(self._seen) - set(broker.group_coordinator.groups):
            del self._seen[gone]
        now = time.monotonic()
        self._counts.append((now, {name: s.count for name, s in broker.stats.apis.items()}))
        while len(self._counts) > 2 and now - self._counts[1][0] >= RATE_WINDOW_SECONDS:
            self._counts.popleft()

    def rates(self) -> dict[str, float]:
        if len(self._counts) < 2:
            return {}
        (t0, first), (t1, last) = self._counts[0], self._counts[-1]
        span = max(t1 - t0, 1e-3)
        return {name: round((count - first.get(name, 0)) / span, 2) for name, count in last.items()}


_HISTORIES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def history(broker) -> ConsoleHistory:
    found = _HISTORIES.get(broker)
    if found is None:
        found = _HISTORIES[broker] = ConsoleHistory()
    return found


def history_of(broker, group_id: str) -> list[dict]:
    return list(history(broker).groups.get(group_id, ()))


def rates_of(broker) -> dict[str, float]:
    return history(broker).rates()


async def run_sampler(broker) -> None:
    keeper = history(broker)
    while True:
        keeper.sample(broker)
        await trio.sleep(SAMPLE_SECONDS)
