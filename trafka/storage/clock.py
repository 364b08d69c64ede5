"""Time is injected: storage reads a clock object so tests move time instead of sleeping."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable, Protocol

from trafka.storage.files import atomic_write


class Clock(Protocol):
    def time_ms(self) -> int:
        """Wall-clock milliseconds since the epoch (record timestamps use the same scale)."""
        ...

    def timer_ms(self) -> int:
        """Milliseconds on the same scale for deadlines, which no wall-clock step moves."""
        ...


# Monotonic time plus this is the wall clock as it was at import: deadlines on a timer that no
# wall-clock step moves (BrokerClock.timer_ms).
_ANCHOR_MS = time.time_ns() // 1_000_000 - time.monotonic_ns() // 1_000_000


class SystemClock:
    def time_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def timer_ms(self) -> int:
        return time.monotonic_ns() // 1_000_000 + _ANCHOR_MS


class ManualClock:
    """A clock that moves only when told to."""

    def __init__(self, start_ms: int = 1_700_000_000_000):
        self.now_ms = start_ms

    def time_ms(self) -> int:
        return self.now_ms

    def timer_ms(self) -> int:
        return self.now_ms

    def advance(self, ms: int) -> None:
        self.now_ms += ms


OFFSET_FILE = "clock.offset"


class BrokerClock:
    """The broker's time: the wall clock plus an offset that only ever grows.

    `advance(ms)` moves it forward for tests (retention, session timeouts, offset expiry...)
    and tells every listener, so background checks whose deadline passed run at once. The
    offset is kept in the data dir (when one is given), so a restart never moves time back.

    Two readings: `time_ms()` (the wall clock plus the offset) for what is written as a time
    (record timestamps, retention against them), and `timer_ms()` for deadlines (sessions,
    rebalances, transaction timeouts, acquisition locks): monotonic time plus the offset,
    anchored to the wall clock when the process started, so a wall-clock step (an NTP jump, a
    VM's resume) neither expires nor stretches a deadline, as Kafka's timers run on
    System.nanoTime.
    """

    def __init__(self, offset_ms: int = 0, state_dir: Path | None = None):
        self._path = Path(state_dir) / OFFSET_FILE if state_dir is not None else None
        stored = _read_offset(self._path) if self._path is not None else 0
        self.offset_ms = max(offset_ms, stored)
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []

    def time_ms(self) -> int:
        return time.time_ns() // 1_000_000 + self.offset_ms

    def timer_ms(self) -> int:
        return time.monotonic_ns() // 1_000_000 + _ANCHOR_MS + self.offset_ms

    def on_advance(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def advance(self, ms: int) -> int:
        """Move time forward by `ms` (a non-negative whole number); returns the new offset."""
        if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
            raise ValueError(f"the clock moves forward only, by a whole number of ms >= 0; got {ms!r}")
        with self._lock:
            self.offset_ms += ms
            if self._path is not None:
                _write_offset(self._path, self.offset_ms)
        for listener in list(self._listeners):
            listener()
        return self.offset_ms


def _read_offset(path: Path) -> int:
    try:
        return max(int(path.read_text().strip() or 0), 0)
    except (OSError, ValueError):
        return 0


def _write_offset(path: Path, offset_ms: int) -> None:
    atomic_write(path, f"{offset_ms}\n")
