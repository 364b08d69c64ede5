"""A follower's replica: the leader's batches appended unchanged, and truncation of a replica
whose log diverged (trafka/storage/log_replica.py)."""

import pytest
from testkit.storage import batch, crash, idempotent

from trafka.storage.errors import CorruptRecord, OutOfOrderSequence
from trafka.storage.log_replica import OffsetMismatch, append_as_follower, truncate_to
from trafka.wire import records as rec
from trafka.wire.records import Record, encode_batch

PID = 4000


def everything(partition_log) -> bytes:
    return partition_log.read(partition_log.log_start_offset, 1 << 30).to_bytes()


def whole_batches(data: bytes) -> bytes:
    """A Fetch-style read without its cut last batch."""
    end = 0
    for pos, header in rec.fetched_batches(data):
        end = pos + header.size
    return data[:end]


def copy_from(leader, follower) -> None:
    """What a replica fetcher does: read from the follower's end, append as follower."""
    while follower.log_end_offset < leader.log_end_offset:
        data = whole_batches(leader.read(follower.log_end_offset, 300).to_bytes())
        append_as_follower(follower, data)


def headers(data) -> list[tuple[int, int, int]]:
    return [(h.base_offset, h.last_offset, h.partition_leader_epoch) for _, h in rec.iter_batches(data)]


def test_follower_keeps_the_leaders_offsets_epochs_and_bytes(open_log, tmp_path):
    leader = open_log(segment_bytes=400)
    follower = open_log(tmp_path / "replica" / "t-0", segment_bytes=400)
    for epoch in (0, 0, 3, 3, 5):
        leader.append(batch(3) + batch(2), partition_leader_epoch=epoch)
    copy_from(leader, follower)
    assert follower.log_end_offset == leader.log_end_offset == 25
    assert everything(follower) == everything(leader)
    assert {h[2] for h in headers(everything(follower))} == {0, 3, 5}
    assert len(follower.segments) > 1  # it rolled by its own segment.bytes
    # The replica survives a crash as any log does.
    crash(follower)
    reopened = open_log(tmp_path / "replica" / "t-0", segment_bytes=400)
    assert everything(reopened) == everything(leader)


def test_follower_learns_producer_state_and_can_take_over_as_leader(open_log, tmp_path):
    leader = open_log()
    follower = open_log(tmp_path / "replica" / "t-0")
    leader.append(idempotent(PID, 0, 0, 3))
    leader.append(idempotent(PID, 0, 3, 2))
    copy_from(leader, follower)
    # As the new leader it answers a retried batch with its original offsets, and refuses a gap.
    duplicate = follower.append(idempotent(PID, 0, 3, 2))
    assert duplicate.duplicate and (duplicate.base_offset, duplicate.last_offset) == (3, 4)
    with pytest.raises(OutOfOrderSequence):
        follower.append(idempotent(PID, 0, 9, 1))
    assert follower.append(idempotent(PID, 0, 5, 1)).base_offset == 5


def test_transaction_markers_reach_the_follower(open_log, tmp_path, clock):
    leader = open_log()
    follower = open_log(tmp_path / "replica" / "t-0")
    leader.append(encode_batch([Record(b"k", b"aborted", timestamp=1)], producer_id=PID, producer_epoch=0,
                               base_sequence=0, transactional=True))
    leader.append_control(PID, 0, False, 0)
    leader.append(encode_batch([Record(b"k", b"open", timestamp=2)], producer_id=PID, producer_epoch=0,
                               base_sequence=1, transactional=True))
    copy_from(leader, follower)
    assert follower.last_stable_offset == leader.last_stable_offset == 2
    assert follower.collect_aborted(0, 3) == leader.collect_aborted(0, 3) != []


def test_batches_that_do_not_continue_the_log_are_refused(open_log, tmp_path):
    leader = open_log()
    follower = open_log(tmp_path / "replica" / "t-0")
    leader.append(batch(2))
    leader.append(batch(2))
    second = whole_batches(leader.read(2, 1 << 20).to_bytes())
    with pytest.raises(OffsetMismatch, match="starts at offset 2, this replica ends at 0"):
        append_as_follower(follower, second)
    both = bytearray(whole_batches(leader.read(0, 1 << 20).to_bytes()))
    both[-1] ^= 0xFF  # a flipped bit in the second batch: its CRC no longer matches
    with pytest.raises(CorruptRecord):
        append_as_follower(follower, both)
    assert follower.log_end_offset == 0 and follower.active_segment.size == 0


def test_truncation_removes_the_batch_holding_the_offset_and_what_follows(open_log):
    log = open_log(segment_bytes=300)
    for _ in range(10):
        log.append(batch(3))  # offsets 0-29, several segments
    segments_before = len(log.segments)
    assert truncate_to(log, 16) == 15  # 16 is inside the batch 15-17: it goes whole
    assert log.log_end_offset == 15
    assert [h[:2] for h in headers(everything(log))] == [(i, i + 2) for i in range(0, 15, 3)]
    assert len(log.segments) < segments_before
    assert all(s.base_offset < 15 for s in log.segments)
    assert {p.name for p in log.directory.iterdir() if p.suffix == ".log"} == {s.log_path.name for s in log.segments}
    # It writes on from there, and a restart finds the same log.
    assert log.append(batch(1)).base_offset == 15
    log.close()
    reopened = open_log(segment_bytes=300)
    assert reopened.log_end_offset == 16
    assert [h[0] for h in headers(everything(reopened))][-2:] == [12, 15]


def test_a_diverged_replica_truncates_then_matches_the_leader(open_log, tmp_path):
    """A follower that took writes as leader under epoch 0 which the new leader (epoch 1) never
    had: it cuts back to where they agree and then holds the new leader's log exactly."""
    old = open_log(tmp_path / "old" / "t-0")
    new = open_log(tmp_path / "new" / "t-0")
    for partition_log in (old, new):
        partition_log.append(batch(4), partition_leader_epoch=0)
    old.append(batch(5), partition_leader_epoch=0)  # acknowledged by nobody else
    new.append(batch(2, value_size=30), partition_leader_epoch=1)
    truncate_to(old, 4)  # the new leader's end offset for epoch 0
    copy_from(new, old)
    assert everything(old) == everything(new)
    assert headers(everything(old)) == [(0, 3, 0), (4, 5, 1)]


def test_truncation_below_the_log_start_empties_the_log(open_log):
    log = open_log(segment_bytes=200)
    for _ in range(6):
        log.append(idempotent(PID, 0, _ * 2, 2))
    log.delete_records_before(8)
    assert truncate_to(log, 3) == 3
    assert (log.log_start_offset, log.log_end_offset) == (3, 3)
    assert everything(log) == b""
    assert log.append(batch(1)).base_offset == 3
    assert log.producer_state.producers == {}
    log.close()
    reopened = open_log(segment_bytes=200)
    assert (reopened.log_start_offset, reopened.log_end_offset) == (3, 4)


def test_truncation_rebuilds_the_producer_state(open_log):
    log = open_log()
    log.append(idempotent(PID, 0, 0, 2))
    log.append(idempotent(PID, 0, 2, 2))
    truncate_to(log, 2)
    # The batch with sequence 2-3 is gone, so it is new again, not a duplicate.
    info = log.append(idempotent(PID, 0, 2, 2))
    assert not info.duplicate and info.base_offset == 2


class _EpochCache:
    """A model of Kafka's LeaderEpochFileCache on a leader: an entry (epoch, start offset) per
    leader epoch from its first batch, and the current epoch's from where its leadership began
    (`end_offset_for` adds it); truncateFromStart when the log start moves; endOffsetFor. An
    epoch that led without writing is not in the model: no client or follower asks for one (a
    position's epoch is that of a batch it read).

    One difference, written in docs/compatibility.md: trafka reads epochs from the batches, so
    where Kafka answers a floor epoch that has no batch left in the log (the entry
    truncateFromStart keeps at the new log start), trafka answers the asked epoch, with the
    same end offset (`as_trafka_knows`)."""

    def __init__(self):
        self.entries: list[list[int]] = []  # [epoch, start offset], by epoch

    def assign(self, epoch: int, start: int) -> None:
        if not self.entries or epoch > self.entries[-1][0]:
            self.entries.append([epoch, start])

    def truncate_from_start(self, start: int) -> None:
        removed = [e for e in self.entries if e[1] <= start]
        if removed:
            self.entries = [[removed[-1][0], start]] + [e for e in self.entries if e[1] > start]

    def end_offset_for(self, requested: int, current: int, log_end: int) -> tuple[int, int]:
        entries = self.entries if self.entries and self.entries[-1][0] == current else [*self.entries, [current, log_end]]
        if requested == -1:
            return -1, -1
        if entries[-1][0] == requested:
            return requested, log_end
        higher = [e for e in entries if e[0] > requested]
        if not higher:
            return -1, -1
        floor = [e for e in entries if e[0] <= requested]
        return (floor[-1][0] if floor else requested), higher[0][1]

    @staticmethod
    def as_trafka_knows(answer: tuple[int, int], requested: int, epochs_in_log: set[int]) -> tuple[int, int]:
        epoch, end = answer
        if epoch not in (-1, requested) and epoch not in epochs_in_log:
            return requested, end
        return answer


@pytest.mark.parametrize("seed", range(30))
def test_epoch_end_offsets_answer_as_kafkas_leader_epoch_cache(open_log, seed):
    """Seeded schedules of elections (some with no write in their epoch), appends, rolls and
    DeleteRecords; after each step OffsetForLeaderEpoch's answer for every epoch is the model's."""
    import random

    from trafka.storage.log_replica import epoch_end_offset

    rng = random.Random(seed)
    log = open_log(segment_bytes=600)
    cache, current = _EpochCache(), 0
    written: list[tuple[int, int, int]] = []  # (base offset, last offset, epoch) of each batch
    for step in range(120):
        action = rng.random()
        if action < 0.15:
            current += rng.choice([1, 1, 2])  # an election; a skipped epoch is one that never led here
        elif action < 0.75:
            info = log.append(batch(rng.randint(1, 4)), partition_leader_epoch=current)
            written.append((info.base_offset, info.last_offset, current))
            cache.assign(current, info.base_offset)
        elif action < 0.85:
            log.roll()
        else:
            start = rng.randint(log.log_start_offset, log.high_watermark)
            log.delete_records_before(start)
            cache.truncate_from_start(log.log_start_offset)
        in_log = {epoch for base, last, epoch in written if last >= log.log_start_offset}
        for epoch in range(-1, current + 2):
            expected = cache.as_trafka_knows(cache.end_offset_for(epoch, current, log.log_end_offset), epoch, in_log)
            assert epoch_end_offset(log, epoch, current) == expected, (seed, step, epoch, cache.entries, log.log_start_offset)
