"""Batch builders shared by the storage tests."""

import contextlib
import os
import subprocess
from pathlib import Path

import pytest

from trafka.wire.records import Record, encode_batch


def batch(n=1, *, ts=1000, value_size=10, key=b"k", **kwargs):
    """A batch of n records with timestamps ts, ts+1, ... as a client would send it."""
    return encode_batch([Record(key, b"v" * value_size, timestamp=ts + i) for i in range(n)], **kwargs)


def idempotent(producer_id, epoch, seq, n=1, **kwargs):
    return batch(n, producer_id=producer_id, producer_epoch=epoch, base_sequence=seq, **kwargs)


def crash(partition_log):
    """What kill -9 leaves behind: every byte handed to the OS, no flush, no clean marker."""
    for segment in partition_log.segments:
        segment.close()
    partition_log._closed = True


@contextlib.contextmanager
def small_tmpfs(mountpoint: Path, size: str):
    """A tmpfs of `size` mounted at `mountpoint` for a disk-full test (skips without root or
    where the kernel refuses the mount); unmounted on exit."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mountpoint.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mountpoint)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)
