"""Recovery paths not covered by the log tests."""

import logging

from trafka.storage.log import PartitionLog


def test_empty_segment_reopens_cleanly_many_times(tmp_path, caplog):
    """An empty segment closed and reopened repeatedly never gains a bogus time index entry."""
    caplog.set_level(logging.INFO, logger="trafka.storage")
    for _ in range(4):
        PartitionLog(tmp_path / "t-0").close()
    assert "points past the end" not in caplog.text
    assert (tmp_path / "t-0" / "00000000000000000000.timeindex").stat().st_size == 0
