"""The broker's storage timers: retention, the log cleaner and the flush scheduler.

Each is a trio task that sleeps its interval (or wakes when the broker clock is advanced),
reads the broker's injected clock, and calls the
synchronous storage layer for every partition. Storage stays free of trio; these loops are the
only place its retention, compaction and flush policies are driven from.

- retention, every log.retention.check.interval.ms: `storage.retention.apply_retention`.
- cleaner, every log.cleaner.backoff.ms when log.cleaner.enable: `storage.cleaner.LogCleaner`,
  its slow step (decoding, re-encoding and fsyncing the cleaned segments) in a worker thread.
- flush, every log.flush.scheduler.interval.ms: each partition whose flush.ms is due, fsynced in
  a worker thread by `flush_off_loop`, so flush.ms holds even when no append arrives. The
  Produce handler runs flush.messages / flush.ms fsyncs through the same `flush_off_loop`
  before it answers: no fsync of a partition's data runs on the loop.
- rolled segments: the fsync a segment roll needs runs in a worker thread as soon as the roll
  happens (`RollFlusher`), as Kafka schedules it, instead of inside the Produce that rolled.

Nothing slow runs on the trio thread: a worker thread reads only closed (read-only) segments
and writes only new files; what it produced is swapped in back on the loop. Every such thread
runs through the broker's `StorageThreads`, so a stopped broker of a simulated cluster closes
its logs only once they are done (Cluster.stop_broker).

A failure on one partition is logged and skips that partition for this round; the others go on.
"""

from __future__ import annotations

import inspect
import logging
import sys
import threading
from functools import partial

import trio

from trafka.storage.cleaner import LogCleaner
from trafka.storage.errors import StorageError
from trafka.storage.retention import apply_retention

log = logging.getLogger("trafka.broker")


def _each_log(broker, action, what: str, logs=None) -> None:
    for topic, partition, partition_log in logs if logs is not None else broker.logs.opened_logs():
        try:
            action(partition_log)
        except Exception:
            log.exception("%s failed for %s-%d", what, topic, partition)


def run_retention_once(broker) -> None:
    now = broker.clock.time_ms()
    _each_log(broker, lambda partition_log: apply_retention(partition_log, now), "retention")


def run_cleaner_inline(broker, cleaner: LogCleaner) -> None:
    """One cleaner pass on the loop: what advance_clock runs, so the next request sees it."""
    now = broker.clock.time_ms()
    _each_log(broker, lambda partition_log: cleaner.clean_logs([partition_log], now), "log cleaning")


async def in_worker_thread(fn, *args):
    """Run a CPU-heavy storage step in a worker thread. The thread holds the GIL between its
    own switches; while it runs, the interval is cut from 5 ms to 0.2 ms so the loop, which
    wants the GIL back after every socket call, waits microseconds instead of 5 ms each time."""
    global _threads_running
    if _threads_running == 0:
        sys.setswitchinterval(_BUSY_SWITCH_INTERVAL)
    _threads_running += 1
    try:
        return await trio.to_thread.run_sync(fn, *args)
    finally:
        _threads_running -= 1
        if _threads_running == 0:
            sys.setswitchinterval(_SWITCH_INTERVAL)


_SWITCH_INTERVAL = sys.getswitchinterval()
_BUSY_SWITCH_INTERVAL = 0.0002
_threads_running = 0


class StorageThreads:
    """A broker's storage work in worker threads (flushes, deferred loads, rolled segments'
    fsyncs, the cleaner's writes, topic metadata and directory removals), counted so that a
    stop can wait for it: a cancelled task still waits for its thread, but a broker stopped on
    the loop closes its logs at once, and a recovery point a thread wrote after that could land
    while the broker starts again."""

    def __init__(self) -> None:
        self._idle = threading.Condition()
        self._running = 0

    async def run(self, fn, *args, cpu_heavy: bool = False):
        """`fn(*args)` in a worker thread (`in_worker_thread` when `cpu_heavy`)."""
        ran = False

        def work():
            nonlocal ran
            ran = True
            try:
                return fn(*args)
            finally:
                self._finished()

        with self._idle:
            self._running += 1
        try:
            return await (in_worker_thread(work) if cpu_heavy else trio.to_thread.run_sync(work))
        finally:
            if not ran:  # cancelled before its thread started
                self._finished()

    def _finished(self) -> None:
        with self._idle:
            self._running -= 1
            self._idle.notify_all()

    def wait_idle(self) -> None:
        """Block until none of this broker's storage work runs in a worker thread (none
        needs the loop to finish)."""
        with self._idle:
            self._idle.wait_for(lambda: self._running == 0)


async def run_cleaner_once(broker, cleaner: LogCleaner) -> None:
    """One cleaner pass: planned and swapped in on the loop, written in a worker thread."""
    now = broker.clock.time_ms()
    for topic, partition, partition_log in list(broker.logs.opened_logs()):
        try:
            cleaning = cleaner.plan(partition_log, now)
            if cleaning is None:
                continue
            try:
                await broker.storage_threads.run(cleaner.write, cleaning, cpu_heavy=True)
                if cleaner.finish(cleaning):
                    await broker.storage_threads.run(cleaner.checkpoint, cleaning)
            finally:
                cleaner.release(cleaning)
        except Exception:
            log.exception("log cleaning failed for %s-%d", topic, partition)


class RollFlusher:
    """Runs `PartitionLog.flush_rolled` in a worker thread for each log that rolled."""

    def __init__(self, threads: StorageThreads) -> None:
        self._threads = threads
        self._logs: dict[int, object] = {}
        self._wake = trio.Event()

    def rolled(self, partition_log) -> None:
        """LogManager.on_roll: called on the loop by the append that rolled."""
        self._logs[id(partition_log)] = partition_log
        self._wake.set()

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake = trio.Event()
            logs, self._logs = list(self._logs.values()), {}
            for partition_log in logs:
                try:
                    await self._threads.run(partition_log.flush_rolled)
                except OSError as exc:  # a full or failing disk: the next roll or close retries
                    log.error("flushing rolled segments of %s failed: %s", partition_log.directory, exc.strerror or exc)
                except Exception:
                    log.exception("flushing rolled segments of %s failed", partition_log.directory)


async def load_off_loop(broker, partitions) -> None:
    """Open, in a worker thread, every partition among `partitions` ((topic, partition) pairs;
    unknown ones are skipped) that was closed cleanly and not read since the start (a deferred
    partition, PartitionLog.load_deferred), so its first Produce, Fetch or ListOffsets does not
    read its files on the event loop. Anything else touching it meanwhile waits for the load."""
    for topic, partition in partitions:
        try:
            partition_log = broker.logs.log(topic, partition)
        except StorageError:
            continue
        if partition_log.deferred:
            await broker.storage_threads.run(partition_log.load_deferred)


async def flush_off_loop(broker, partition_log) -> None:
    """The one way the broker runs a flush.messages / flush.ms fsync: what it covers taken on
    the loop, the fsyncs and the recovery point written in a worker thread, the counters reset
    back on the loop. Raises the OSError of a failed fsync."""
    plan = partition_log.begin_flush()
    if plan is None:
        return
    await broker.storage_threads.run(plan.run)
    partition_log.end_flush(plan)


async def run_flush_once(broker) -> None:
    """The flush scheduler's pass: every partition whose flush.ms (or flush.messages) is due."""
    for topic, partition, partition_log in list(broker.logs.logs_with_flush_policy()):
        try:
            if not partition_log.deferred and partition_log.flush_due():
                await flush_off_loop(broker, partition_log)
        except Exception:
            log.exception("flush failed for %s-%d", topic, partition)


def run_flush_inline(broker) -> None:
    """The same pass on the loop: what advance_clock runs, so the next request sees it."""
    _each_log(broker, lambda partition_log: partition_log.flush_if_due(), "flush",
              list(broker.logs.logs_with_flush_policy()))


class Timer:
    """A periodic check on broker time: `run_if_due(now)` runs it when its time has come."""

    def __init__(self, interval_ms: int, action, now_ms: int, inline_action=None):
        self.interval_ms = interval_ms
        self.action = action
        self.inline_action = inline_action or action
        self.due_ms = now_ms + interval_ms

    def run_if_due(self, now_ms: int) -> None:
        """advance_clock's path: at once, on the loop."""
        if now_ms >= self.due_ms:
            self.due_ms = now_ms + self.interval_ms
            self.inline_action()


async def every(broker, interval_ms: int, action, inline_action=None) -> None:
    """Run `action` every `interval_ms` of broker time (awaited when it is a coroutine
    function: the cleaner's slow step runs in a worker thread). The timer is registered with
    the broker, so `Broker.advance_clock` runs it before returning when the move makes it due;
    there `inline_action` runs instead when given (the same work without awaiting)."""
    timer = Timer(interval_ms, action, broker.clock.time_ms(), inline_action)
    broker.timers.append(timer)
    try:
        while True:
            with trio.move_on_after(max(timer.due_ms - broker.clock.time_ms(), 0) / 1000):
                await broker.wait_clock_moved()
            now = broker.clock.time_ms()
            if now >= timer.due_ms:
                timer.due_ms = now + timer.interval_ms
                if inspect.isawaitable(result := action()):
                    await result
    finally:
        broker.timers.remove(timer)


def storage_tasks(broker) -> list:
    """The coroutine functions `Broker.background_tasks` adds for storage."""
    config = broker.config
    flusher = RollFlusher(broker.storage_threads)
    broker.logs.on_roll = flusher.rolled
    tasks = [
        flusher.run,
        partial(every, broker, config["log.retention.check.interval.ms"], partial(run_retention_once, broker)),
        partial(every, broker, config["log.flush.scheduler.interval.ms"], partial(run_flush_once, broker),
                partial(run_flush_inline, broker)),
    ]
    if config["log.cleaner.enable"]:
        cleaner = LogCleaner()
        tasks.append(partial(
            every, broker, config["log.cleaner.backoff.ms"], partial(run_cleaner_once, broker, cleaner),
            partial(run_cleaner_inline, broker, cleaner),
        ))
    return tasks
