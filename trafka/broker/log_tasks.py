"""The broker's storage timers: retention, the log cleaner and the flush scheduler.

Each is a trio task that sleeps its interval (or wakes when the broker clock is advanced),
reads the broker's injected clock, and calls the
synchronous storage layer for every partition. Storage stays free of trio; these loops are the
only place its retention, compaction and flush policies are driven from.

- retention, every log.retention.check.interval.ms: `storage.retention.apply_retention`.
- cleaner, every log.cleaner.backoff.ms when log.cleaner.enable: `storage.cleaner.LogCleaner`.
- flush, every log.flush.scheduler.interval.ms: `PartitionLog.flush_if_due`, so flush.ms holds
  even when no append arrives.

A failure on one partition is logged and skips that partition for this round; the others go on.
"""

from __future__ import annotations

import logging
from functools import partial

import trio

from trafka.storage.cleaner import LogCleaner
from trafka.storage.retention import apply_retention

log = logging.getLogger("trafka.broker")


def _each_log(broker, action, what: str) -> None:
    for topic, partition, partition_log in broker.logs.logs():
        try:
            action(partition_log)
        except Exception:
            log.exception("%s failed for %s-%d", what, topic, partition)


def run_retention_once(broker) -> None:
    now = broker.clock.time_ms()
    _each_log(broker, lambda partition_log: apply_retention(partition_log, now), "retention")


def run_cleaner_once(broker, cleaner: LogCleaner) -> None:
    now = broker.clock.time_ms()

    def clean(partition_log):
        cleanable = cleaner.needs_cleaning(partition_log, now)
        if cleanable is not None:
            cleaner.clean(partition_log, cleanable, now)

    _each_log(broker, clean, "log cleaning")


def run_flush_once(broker) -> None:
    _each_log(broker, lambda partition_log: partition_log.flush_if_due(), "flush")


class Timer:
    """A periodic check on broker time: `run_if_due(now)` runs it when its time has come."""

    def __init__(self, interval_ms: int, action, now_ms: int):
        self.interval_ms = interval_ms
        self.action = action
        self.due_ms = now_ms + interval_ms

    def run_if_due(self, now_ms: int) -> None:
        if now_ms >= self.due_ms:
            self.due_ms = now_ms + self.interval_ms
            self.action()


async def every(broker, interval_ms: int, action) -> None:
    """Run `action` every `interval_ms` of broker time. The timer is registered with the broker,
    so `Broker.advance_clock` runs it before returning when the move makes it due."""
    timer = Timer(interval_ms, action, broker.clock.time_ms())
    broker.timers.append(timer)
    try:
        while True:
            with trio.move_on_after(max(timer.due_ms - broker.clock.time_ms(), 0) / 1000):
                await broker.wait_clock_moved()
            timer.run_if_due(broker.clock.time_ms())
    finally:
        broker.timers.remove(timer)


def storage_tasks(broker) -> list:
    """The coroutine functions `Broker.background_tasks` adds for storage."""
    config = broker.config
    tasks = [
        partial(every, broker, config["log.retention.check.interval.ms"], partial(run_retention_once, broker)),
        partial(every, broker, config["log.flush.scheduler.interval.ms"], partial(run_flush_once, broker)),
    ]
    if config["log.cleaner.enable"]:
        cleaner = LogCleaner()
        tasks.append(partial(every, broker, config["log.cleaner.backoff.ms"], partial(run_cleaner_once, broker, cleaner)))
    return tasks
