"""PartitionLog: one partition's segments, log start offset and log end offset (Kafka's UnifiedLog).

A partition is a directory `<topic>-<partition>/` of segments plus a few small files:
`log-start-offset` and `recovery-point` checkpoints, producer-state `.snapshot`s and, between a
clean close and the next open, the `.kafka_cleanshutdown` marker. See docs/storage.md.

Not thread-safe: the broker calls it from one thread (the trio loop). Opening a directory is
log_loader.load; reading the segments is log_read (Kafka's LocalLog.read); a flush off the
event loop is a log_flush.FlushPlan; retention is `delete_old_segments(predicate)` over the
oldest segments; compaction builds a segment with segment_swap.new_cleaned_segment and swaps it
in with segment_swap.replace_segments.
"""

from __future__ import annotations

import bisect
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from trafka.storage.clock import Clock, SystemClock
from trafka.storage.config import LogConfig
from trafka.storage.errors import LogClosed, OffsetOutOfRange, StorageWriteFailed
from trafka.storage.files import remove_dir
from trafka.storage.log_loader import (
    CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_FILE, RECOVERY_POINT_FILE, CleanState, write_checkpoint,
    load,
)
from trafka.storage import log_read
from trafka.storage.log_flush import FlushPlan
from trafka.storage.log_validator import validate_batches
from trafka.storage.log_read import ReadInfo, TimestampAndOffset

from trafka.storage.producer_state import CompletedTxn, ProducerStateManager, has_producer_state
from trafka.storage.segment import LogSegment
from trafka.storage.txn_index import AbortedTxn
from trafka.wire import records as rec

log = logging.getLogger("trafka.storage")

@dataclass(frozen=True)
class AppendInfo:
    base_offset: int
    last_offset: int
    log_append_time: int  # -1 unless the topic uses LogAppendTime
    log_start_offset: int
    record_count: int
    # True when the batch was a retry of one already in the log: nothing was written and
    # the offsets are the original ones, which the broker returns as a success.
    duplicate: bool = False


class _LoadedState:
    """One of a partition's loaded attributes, kept in the instance's __dict__: reading it before
    the partition is loaded loads it (PartitionLog.load_deferred) first, or, while a worker
    thread loads it (broker/log_tasks.load_off_loop), waits for that load to finish."""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, partition_log, owner=None):
        if partition_log is None:
            return self
        state = partition_log.__dict__
        if state.get("_deferred") and state.get("_loader") != threading.get_ident():
            partition_log.load_deferred()
        try:
            return state[self.name]
        except KeyError:
            raise AttributeError(f"{type(partition_log).__name__!r} has no {self.name!r} yet") from None

    def __set__(self, partition_log, value) -> None:
        partition_log.__dict__[self.name] = value


class PartitionLog:
    # Called (no arguments) after each append and control batch, when set: a simulated
    # cluster's replication learns which leader logs grew (LogManager.set_on_append).
    on_append: Callable[[], None] | None = None

    def __init__(
        self,
        directory: str | os.PathLike,
        config: LogConfig | None = None,
        *,
        clock: Clock | None = None,
        lazy: bool = False,
        on_roll: Callable[["PartitionLog"], None] | None = None,
        clean_state: "CleanState | None" = None,
        fresh: bool = False,
    ):
        """With lazy, a partition whose directory does not exist yet stays without one until
        its first write (the LogManager's new and never-written partitions); with fresh too,
        the caller has seen that the directory does not exist, so opening lists nothing.

        With clean_state, the log directory's checkpoints (LogManager) say this partition was
        closed cleanly and give its log start offset: it opens as after a clean shutdown
        without a marker file of its own, and not before its first use (see _LoadedState), so a
        restart with thousands of written partitions reads none of their files up front.

        With on_roll, a roll leaves the rolled segment's fsync (and the producer-state snapshot
        and recovery point) to `flush_rolled`, which the caller runs in a worker thread after
        on_roll tells it; without, a roll does them at once."""
        self.directory = directory if isinstance(directory, Path) else Path(directory)
        self.on_roll = on_roll
        # Appended on the loop by a roll, taken by flush_rolled in a worker thread (list.append
        # and list.pop are atomic under the GIL). A list, not a deque: an empty deque holds a
        # 64-slot block, ~0.7 KB for each of thousands of partitions.
        self._rolled: list[tuple[LogSegment, int, tuple[Path, str]]] = []
        self.config = config or LogConfig.of()
        self.clock = clock or SystemClock()
        self._closed = False
        self._high_watermark_hold: int | None = None  # the high watermark when replicas hold it back
        self.leader_epoch = 0  # stamped on each batch appended here (a simulated cluster moves it)
        self._unflushed_messages = 0
        self._last_flush_ms = self.clock.time_ms()
        self._clean_state = clean_state
        self._load_lock = threading.Lock()
        self._loader: int | None = None  # the thread running load_deferred
        self._deferred = clean_state is not None
        if not self._deferred:
            if not lazy:
                self.directory.mkdir(parents=True, exist_ok=True)
            self._open(fresh=fresh and lazy)

    # What load() sets: reading any of them first loads a deferred partition (load_deferred).
    segments = _LoadedState()
    _bases = _LoadedState()
    producer_state = _LoadedState()
    log_start_offset = _LoadedState()

    def load_deferred(self) -> None:
        """Open a partition that was closed cleanly and not read since this start (clean_state):
        its first use, whatever reads it, comes here through a _LoadedState. Thread-safe: the
        broker runs it in a worker thread (log_tasks.load_off_loop) and a reader on the loop
        meanwhile waits for it; the partition is seen loaded only once it is whole."""
        with self._load_lock:
            if not self.__dict__.get("_deferred"):
                return
            if self._closed:
                raise LogClosed(f"log {self.directory} is closed")
            self._loader = threading.get_ident()
            try:
                self._open()
            except BaseException:
                for attr in ("segments", "_bases", "producer_state", "log_start_offset"):
                    self.__dict__.pop(attr, None)
                raise
            else:
                self._deferred = False
            finally:
                self._loader = None

    @property
    def deferred(self) -> bool:
        """Closed cleanly last time and not read since this start (see clean_state)."""
        return self.__dict__.get("_deferred", False)

    def _open(self, fresh: bool = False) -> None:
        self.segments: list[LogSegment] = []
        self._bases: list[int] = []  # segments' base offsets, for bisect
        self.producer_state = ProducerStateManager(self.directory)
        load(self, fresh=fresh)

    # --- offsets --------------------------------------------------------------------------

    @property
    def log_end_offset(self) -> int:
        return self.segments[-1].next_offset

    @property
    def high_watermark(self) -> int:
        """One replica: everything appended is committed. A replicated partition's is what every
        in-sync replica has, as its replica layer holds it (`update_high_watermark`)."""
        held = self._high_watermark_hold
        return self.log_end_offset if held is None else min(held, self.log_end_offset)

    @property
    def high_watermark_hold(self) -> int | None:
        """Where the replica layer holds the high watermark (None: it follows the log end)."""
        return self._high_watermark_hold

    def update_high_watermark(self, offset: int | None) -> None:
        """Kafka's updateHighWatermark, from the broker's replica layer: a leader's, what its
        in-sync replicas have; a follower's, what its leader last said; None: every appended
        record is committed (one replica). Read as min(it, the log end offset)."""
        self._high_watermark_hold = offset

    @property
    def last_stable_offset(self) -> int:
        """The first offset of the oldest open transaction, else the high watermark:
        read_committed consumers never read past it."""
        first_unstable = self.producer_state.first_unstable_offset()
        return self.high_watermark if first_unstable is None else min(first_unstable, self.high_watermark)

    @property
    def active_segment(self) -> LogSegment:
        return self.segments[-1]

    @property
    def size_in_bytes(self) -> int:
        return sum(s.size for s in self.segments)

    # --- loading --------------------------------------------------------------------------

    def _new_segment(self, base_offset: int, now: int, suffix: str = "", *, lazy: bool = False) -> LogSegment:
        return LogSegment(
            self.directory, base_offset, index_interval_bytes=self.config.index_interval_bytes,
            created_ms=now, suffix=suffix, lazy=lazy,
        )

    @property
    def untouched(self) -> bool:
        """Nothing was ever written to this partition's directory (see _load)."""
        if self.deferred:
            return False
        return len(self.segments) == 1 and not self.segments[0].on_disk

    def index_aborted(self, segment: LogSegment, done: CompletedTxn) -> None:
        """An aborted transaction goes into the transaction index of its marker's segment."""
        if done.aborted:
            first_unstable = self.producer_state.first_unstable_offset()
            lso = done.last_offset + 1 if first_unstable is None else min(first_unstable, done.last_offset + 1)
            segment.txn_index.append(AbortedTxn(done.producer_id, done.first_offset, done.last_offset, lso))

    # --- appending ------------------------------------------------------------------------

    def append(self, records, *, partition_leader_epoch: int | None = None, defer_flush: bool = False) -> AppendInfo:
        """Validate and append a produce request's record batches; assign offsets.

        Raises CorruptRecord, InvalidRecord, RecordTooLarge, RecordBatchTooLarge,
        OutOfOrderSequence, InvalidProducerEpoch, and StorageWriteFailed when the disk refuses
        the write (full, EIO, read-only). Nothing is written when it raises, except after a
        failed flush (flush.messages / flush.ms), when the batch is in the log but not synced.
        """
        self.check_open()
        data = bytearray(records)  # private copy: offsets are assigned in place
        batches = validate_batches(data, self.config, self.directory.name)
        now = self.clock.time_ms()
        log_append_time = now if self.config.log_append_time else rec.NO_TIMESTAMP

        offset = self.log_end_offset
        assigned = []
        if partition_leader_epoch is None:
            partition_leader_epoch = self.leader_epoch
        for pos, header in batches:
            rec.set_base_offset(data, pos, offset, partition_leader_epoch)
            if self.config.log_append_time:
                rec.set_log_append_time(data, pos, now)
            assigned.append((pos, rec.parse_header(data, pos)))
            offset += header.last_offset_delta + 1

        producer_append = self.producer_state.prepare()
        for _, header in assigned:
            if has_producer_state(header) and (original := producer_append.check(header)):
                return AppendInfo(
                    original.first_offset, original.last_offset,
                    original.timestamp if self.config.log_append_time else rec.NO_TIMESTAMP,
                    self.log_start_offset, original.last_offset - original.first_offset + 1, duplicate=True,
                )

        max_timestamp = max(h.max_timestamp for _, h in assigned)
        try:
            segment = self._maybe_roll(len(data), max_timestamp, offset - 1, now)
        except OSError as exc:
            raise StorageWriteFailed(f"cannot roll a new segment in {self.directory}: {exc.strerror or exc}", exc.errno) from None
        segment.repair_torn_tail()
        segment.append(data, assigned)  # cut back whole on StorageWriteFailed
        self.producer_state.commit(producer_append)
        record_count = sum(h.record_count for _, h in assigned)
        self._unflushed_messages += record_count
        try:
            if not defer_flush:  # else the caller runs flush.messages/flush.ms off the loop (flush_due)
                self.flush_if_due()
        except OSError as exc:
            # The batch is written (in the page cache) but flush.messages/flush.ms asked for
            # it on disk before the answer: the producer hears that it may not be.
            raise StorageWriteFailed(f"cannot flush {self.directory}: {exc.strerror or exc}", exc.errno) from None
        if self.on_append is not None:
            self.on_append()
        return AppendInfo(assigned[0][1].base_offset, offset - 1, log_append_time, self.log_start_offset, record_count)

    def append_control(
        self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int, *,
        partition_leader_epoch: int | None = None,
    ) -> AppendInfo:
        """Write a transaction marker (COMMIT or ABORT control batch) for the producer and close
        its open transaction here; an abort is added to the transaction index.
        Raises InvalidProducerEpoch for a marker older than the producer's epoch."""
        self.check_open()
        self.producer_state.check_marker(producer_id, producer_epoch)
        now = self.clock.time_ms()
        offset = self.log_end_offset
        data = bytearray(rec.encode_control_batch(producer_id, producer_epoch, commit, coordinator_epoch, now, offset))
        rec.set_base_offset(data, 0, offset, self.leader_epoch if partition_leader_epoch is None else partition_leader_epoch)
        header = rec.parse_header(data, 0)
        try:
            segment = self._maybe_roll(len(data), header.max_timestamp, offset, now)
        except OSError as exc:
            raise StorageWriteFailed(f"cannot roll a new segment in {self.directory}: {exc.strerror or exc}", exc.errno) from None
        segment.repair_torn_tail()
        segment.append(data, [(0, header)])  # cut back whole on StorageWriteFailed
        done = self.producer_state.complete_txn(producer_id, producer_epoch, offset, commit)
        if done is not None:
            self.index_aborted(segment, done)
        self._unflushed_messages += 1
        try:
            self.flush_if_due()
        except OSError as exc:
            raise StorageWriteFailed(f"cannot flush {self.directory}: {exc.strerror or exc}", exc.errno) from None
        if self.on_append is not None:
            self.on_append()
        return AppendInfo(offset, offset, rec.NO_TIMESTAMP, self.log_start_offset, 1)

    def _maybe_roll(self, messages_size: int, max_timestamp: int, max_offset: int, now: int) -> LogSegment:
        segment = self.active_segment
        if segment.size == 0:
            return segment
        # Kafka's LogSegment.shouldRoll: segment.ms counts from the first batch's timestamp when
        # there is one, so restarts do not keep resetting a segment's age.
        if segment.rolling_based_timestamp is not None and segment.rolling_based_timestamp >= 0:
            waited = max_timestamp - segment.rolling_based_timestamp
        else:
            waited = now - segment.created_ms
        if (
            segment.size > self.config.segment_bytes - messages_size
            or waited > self.config.segment_ms
            or max_offset - segment.base_offset > rec.INT32_MAX
        ):
            return self.roll()
        return segment

    def roll(self) -> LogSegment:
        """Start a new active segment at the log end offset; the old one is flushed to disk
        (Kafka schedules that flush; we do it inline) and becomes read-only."""
        self.check_open()
        old = self.active_segment
        if old.size == 0:
            return old
        old.on_become_inactive()
        new = self._new_segment(self.log_end_offset, self.clock.time_ms())
        self.segments.append(new)
        self._bases.append(new.base_offset)
        self._rolled.append((old, new.base_offset, self.producer_state.snapshot(new.base_offset)))
        if self.on_roll is None:
            self.flush_rolled()
        else:
            self.on_roll(self)
        log.debug("%s: rolled new segment at offset %d", self.directory, new.base_offset)
        return new

    def flush_rolled(self) -> None:
        """Make what rolls left behind durable: each rolled segment fsynced, the producer-state
        snapshot taken at the roll written, the recovery point moved up to the new segment.
        Safe in a worker thread while the loop appends: it touches only rolled (read-only)
        segments and files the loop does not write meanwhile."""
        while self._rolled:
            old, new_base, snapshot = self._rolled.pop(0)
            if self._closed:
                continue  # close() flushed everything and wrote its own checkpoints
            self.producer_state.write_snapshot(*snapshot)
            try:
                old.flush()
            except LogClosed:
                continue  # deleted by retention meanwhile
            # Every earlier segment was flushed when it rolled, so all below the new one is on disk.
            self._write_recovery_point(new_base)

    # --- flushing -------------------------------------------------------------------------

    def flush_due(self) -> bool:
        """flush.messages or flush.ms asks for an fsync now. With Kafka's defaults (Long.MAX)
        never: durability comes from the page cache, as in Kafka."""
        return (
            self._unflushed_messages >= self.config.flush_messages
            or self.clock.time_ms() - self._last_flush_ms >= self.config.flush_ms
        )

    def flush_if_due(self) -> None:
        if self.flush_due():
            self.flush()

    def flush(self) -> None:
        """fsync every segment that may hold unflushed data and advance the recovery point, at
        once (close, snapshots, tests); the broker runs due flushes as begin_flush on the loop,
        FlushPlan.run in a worker thread, end_flush back on the loop (broker/log_tasks.py)."""
        plan = self.begin_flush()
        if plan is not None:
            plan.run()
            self.end_flush(plan)

    def begin_flush(self) -> "FlushPlan | None":
        """What a flush covers, taken on the loop: the log end offset now and the segments."""
        self.check_open()
        if self.untouched:
            return None
        return FlushPlan(self.directory, self.log_end_offset, list(self.segments), self._unflushed_messages)

    def end_flush(self, plan: "FlushPlan") -> None:
        self._unflushed_messages = max(self._unflushed_messages - plan.messages, 0)
        self._last_flush_ms = self.clock.time_ms()

    def _write_recovery_point(self, offset: int) -> None:
        write_checkpoint(self.directory / RECOVERY_POINT_FILE, offset)

    # --- reading --------------------------------------------------------------------------

    def _check_offset(self, offset: int) -> None:
        if offset < self.log_start_offset or offset > self.log_end_offset:
            raise OffsetOutOfRange(offset, self.log_start_offset, self.log_end_offset)

    def _segment_index(self, offset: int) -> int:
        return max(bisect.bisect_right(self._bases, offset) - 1, 0)

    def read(
        self, fetch_offset: int, max_bytes: int, *, min_one_batch: bool = True, partial_tail: bool = False,
        max_offset: int | None = None, replica: bool = False,
    ) -> ReadInfo:
        """Batches from the one containing fetch_offset, up to max_bytes, never past the high
        watermark (nor max_offset, exclusive): `log_read.read`. Raises OffsetOutOfRange below
        the log start offset or above the log end offset; between the high watermark and the
        log end it reads nothing. A `replica` (a follower) reads up to the log end offset."""
        self.check_open()
        if replica:
            if not self.log_start_offset <= fetch_offset <= self.log_end_offset:
                raise OffsetOutOfRange(fetch_offset, self.log_start_offset, self.log_end_offset)
        else:
            self._check_offset(fetch_offset)
            if self._high_watermark_hold is not None and self.high_watermark < self.log_end_offset:
                if fetch_offset >= self.high_watermark:
                    # Between the high watermark and the log end: nothing to read yet, as
                    # Kafka's LocalLog.read answers a consumer (no OFFSET_OUT_OF_RANGE).
                    return ReadInfo([], self.high_watermark, self.log_start_offset)
                max_offset = self.high_watermark if max_offset is None else min(max_offset, self.high_watermark)
        segments = self.segments[self._segment_index(fetch_offset):]
        slices = log_read.read_segments(segments, fetch_offset, max_bytes, min_one_batch=min_one_batch,
                                        partial_tail=partial_tail, max_offset=max_offset)
        return ReadInfo(slices, self.high_watermark, self.log_start_offset)

    def collect_aborted(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound) (`log_read.collect_aborted`)."""
        return log_read.collect_aborted(self.segments[self._segment_index(fetch_offset):], fetch_offset, upper_bound)

    def offset_for_timestamp(self, timestamp: int) -> TimestampAndOffset | None:
        """The first record at or after the log start offset with a timestamp >= timestamp."""
        self.check_open()
        return log_read.offset_for_timestamp(self.segments, timestamp, self.log_start_offset)

    def max_timestamp(self) -> TimestampAndOffset | None:
        """The record with the largest timestamp (ListOffsets -3), first one on ties."""
        self.check_open()
        return log_read.max_timestamp(self.segments)

    # --- moving the log start offset ------------------------------------------------------

    def delete_records_before(self, offset: int) -> int:
        """DeleteRecords: move the log start offset up to `offset` and drop the segments now
        wholly below it. Returns the new log start offset (the low watermark)."""
        self.check_open()
        if offset > self.high_watermark or offset < 0:
            raise OffsetOutOfRange(offset, self.log_start_offset, self.high_watermark)
        if offset > self.log_start_offset:
            self._advance_log_start_offset(offset)
            self.delete_old_segments(
                lambda segment, next_segment: next_segment is not None and next_segment.base_offset <= offset,
                reason=f"log start offset {offset}",
            )
        return self.log_start_offset

    def _advance_log_start_offset(self, offset: int) -> None:
        self.log_start_offset = offset
        write_checkpoint(self.directory / LOG_START_OFFSET_FILE, offset)
        self.producer_state.on_log_start_offset_incremented(offset)

    def delete_old_segments(
        self, predicate: Callable[[LogSegment, LogSegment | None], bool], *, reason: str
    ) -> int:
        """Delete the oldest segments while predicate(segment, next_segment) holds (next_segment
        is None for the active one). Retention is a predicate (age of the newest record, size
        over retention.bytes, ...). As Kafka's deletableSegments, only segments wholly below
        the high watermark go (the predicate is not asked of the others), so the log start
        offset never passes it: records not yet on every in-sync replica stay until they are.
        If the active segment qualifies too, the log rolls first so that an (empty) active
        segment always remains. Returns the number deleted."""
        self.check_open()
        deletable: list[LogSegment] = []
        high_watermark = self.high_watermark
        for i, segment in enumerate(self.segments):
            next_segment = self.segments[i + 1] if i + 1 < len(self.segments) else None
            if next_segment is None and segment.size == 0:
                break
            upper_bound = next_segment.base_offset if next_segment is not None else self.log_end_offset
            if upper_bound > high_watermark or not predicate(segment, next_segment):
                break
            deletable.append(segment)
        if not deletable:
            return 0
        if deletable[-1] is self.active_segment:
            self.roll()
        for segment in deletable:
            log.info("%s: deleting segment %d (%s)", self.directory, segment.base_offset, reason)
            self.segments.remove(segment)
            segment.delete()
        self._bases = [s.base_offset for s in self.segments]
        if self.segments[0].base_offset > self.log_start_offset:
            self._advance_log_start_offset(self.segments[0].base_offset)
        return len(deletable)

    # --- lifecycle ------------------------------------------------------------------------

    def update_config(self, config: LogConfig) -> None:
        self.config = config
        if self.deferred:
            return  # its segments are made with this config when it loads
        for segment in self.segments:
            segment.index_interval_bytes = config.index_interval_bytes

    @property
    def closed(self) -> bool:
        return self._closed

    def check_open(self) -> None:
        if self._closed:
            raise LogClosed(f"log {self.directory} is closed")

    def close(self) -> None:
        """Flush everything, snapshot producer state, and leave the clean-shutdown marker so
        the next open trusts the indexes instead of rescanning."""
        state = self.close_for_checkpoint()
        if state is None:
            return
        try:
            write_checkpoint(self.directory / LOG_START_OFFSET_FILE, state.log_start_offset)
            write_checkpoint(self.directory / RECOVERY_POINT_FILE, state.recovery_point)
            (self.directory / CLEAN_SHUTDOWN_FILE).touch()
        except OSError as exc:
            log.error("%s: cannot mark a clean shutdown (%s)", self.directory, exc.strerror or exc)

    def close_for_checkpoint(self) -> "CleanState | None":
        """Close cleanly, leaving the checkpoints to the caller (the LogManager writes one
        recovery-point and one log-start-offset checkpoint for the whole log directory, and
        one clean-shutdown marker, as Kafka does): every segment fsynced and the producer
        state snapshotted. Returns the state to checkpoint, or None when there is nothing to
        record (a never-written partition) or the close failed (the next start recovers it)."""
        if self._closed:
            return None
        if self.deferred:  # never read since a clean start: its files and state are unchanged
            self._closed = True
            return self._clean_state
        if self.untouched and self.log_start_offset == 0:
            # Nothing to flush or checkpoint: the empty directory reopens as a fresh partition.
            self.active_segment.close()
            self._closed = True
            return None
        try:
            active = self.active_segment
            active.record_max_timestamp()
            FlushPlan(self.directory, self.log_end_offset, list(self.segments), 0).sync_segments()
            active.on_become_inactive()
            if self.producer_state.latest_snapshot_offset != self.log_end_offset:
                self.producer_state.take_snapshot(self.log_end_offset)
            state = CleanState(self.log_end_offset, self.log_start_offset)
        except OSError as exc:
            # A full, failed or read-only disk: no clean-shutdown marker, so the next start
            # recovers this partition from its files (which hold every acknowledged batch).
            log.error("%s: cannot close cleanly (%s); the next start recovers it", self.directory, exc.strerror or exc)
            state = None
        for segment in self.segments:
            segment.close()
        self._closed = True
        return state

    def abandon(self) -> None:
        """Close the files as a killed process would: no flush, no checkpoints, no clean-shutdown
        marker, so the next open recovers (an in-process broker's abrupt stop)."""
        if not self.deferred:
            for segment in self.segments:
                segment.close()
        self._closed = True

    def delete(self, *, remove: bool = True) -> Path | None:
        """Close without flushing and remove the partition directory (remove=False: rename it
        aside and return it, see remove_dir)."""
        if not self.deferred:
            for segment in self.segments:
                segment.close()
        self._closed = True
        return remove_dir(self.directory, remove=remove)

    def __repr__(self) -> str:
        return (
            f"PartitionLog({self.directory}, start={self.log_start_offset}, end={self.log_end_offset}, "
            f"segments={len(self.segments)})"
        )
