"""Recovery paths not covered by the log tests."""

import logging

from trafka.storage.log import PartitionLog


def test_empty_segment_reopens_cleanly_many_times(tmp_path, caplog):
    """An empty segment closed and reopened repeatedly never gains a bogus time index entry."""
    caplog.set_level(logging.INFO, logger="trafka.storage")
    for _ in range(4):
        partition_log = PartitionLog(tmp_path / "t-0")
        partition_log.active_segment.fileno()  # the segment's files exist, still empty
        partition_log.close()
    assert "points past the end" not in caplog.text
    assert (tmp_path / "t-0" / "00000000000000000000.timeindex").stat().st_size == 0


def test_a_fresh_partition_writes_no_file_until_its_first_append(tmp_path):
    for _ in range(2):
        PartitionLog(tmp_path / "t-0").close()
    assert list((tmp_path / "t-0").iterdir()) == []
    partition_log = PartitionLog(tmp_path / "t-0")
    assert partition_log.log_end_offset == 0 and partition_log.read(0, 100).slices == []
    from trafka.wire import records

    partition_log.append(records.encode_batch([records.Record(b"k", b"v", (), 1)]))
    partition_log.close()
    assert sorted(p.name for p in (tmp_path / "t-0").iterdir() if p.name.startswith("0000") and not p.name.endswith(".snapshot")) == [
        "00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.timeindex",
    ]
    assert PartitionLog(tmp_path / "t-0").log_end_offset == 1
