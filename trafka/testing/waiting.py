"""The one way trafka's tests wait for something a real client or broker does in its own time.

    from trafka.testing.waiting import wait_until

    records = wait_until(lambda: consumer.poll(timeout_ms=100), 10, "a record")

Use it only for what runs on another thread or process (a client's background rebalance, a
broker task on the wall clock); a timer of the broker's own is moved with `advance_clock` instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

INTERVAL_S = 0.05


def wait_until(predicate: Callable[[], T], timeout: float, message: str | Callable[[], str] = "condition",
               interval: float = INTERVAL_S) -> T:
    """predicate()'s first truthy value, asked every `interval` seconds; AssertionError naming
    `message` (a string, or a callable asked only on failure, e.g. for a log) after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            what = message() if callable(message) else message
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def wait_for_log(broker, text: str, timeout: float = 10) -> str:
    """The broker's log once it contains `text` (a TrafkaBroker, child process or in-process)."""
    return wait_until(lambda: text in (log := broker.log_text()) and log, timeout,
                      lambda: f"a log line containing {text!r}; the log:\n{broker.log_text()[-3000:]}")
