"""What the console remembers over time: requests per second per API.

A sampler reads the request counters every `SAMPLE_SECONDS` (on the broker's trio thread) and
keeps `RATE_WINDOW_SECONDS` of them. A group's rebalance history is the group's own
`transitions` (kept by the coordinator's Group).
"""

from __future__ import annotations

import time
import weakref
from collections import deque

import trio

SAMPLE_SECONDS = 0.2
RATE_WINDOW_SECONDS = 5.0


class ConsoleHistory:
    def __init__(self):
        self._counts: deque = deque()  # (monotonic time, {api: count})

    def sample(self, broker) -> None:
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
    """The group's state changes since the broker started (classic and consumer groups), each
    marked `rebalance` when it began or completed one (a classic group's PreparingRebalance or
    CompletingRebalance, a consumer group's new group epoch)."""
    group = broker.group_coordinator.group(group_id)
    if group is None:
        return []
    return [{**t, "rebalance": t.get("rebalance") or t["state"] in ("PreparingRebalance", "CompletingRebalance")}
            for t in getattr(group, "transitions", ())]


def rates_of(broker) -> dict[str, float]:
    return history(broker).rates()


async def run_sampler(broker) -> None:
    keeper = history(broker)
    while True:
        keeper.sample(broker)
        await trio.sleep(SAMPLE_SECONDS)
