"""What a broker process costs, read from /proc (Linux), for the memory-bound tests."""

from __future__ import annotations

from pathlib import Path


def rss_mb(broker) -> float:
    """The resident memory of a TrafkaBroker's process, in MiB."""
    for line in Path(f"/proc/{broker.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")
