"""`python -m bench.startup [--runs N]`: how fast a test gets a broker it can talk to.

Each run starts a broker on a fresh data dir and times from the call to the first valid
ApiVersions answer (polled every 5 ms, as `bench.brokers` does for every broker):
- `TrafkaBroker(in_process=True)`: trio in a thread of this process (imports paid once, by a
  warm-up run that is not counted), the way a pytest suite with a broker per test uses it;
  its default is one partition per internal topic; a line with Kafka's 50 + 50 is shown too;
- `trafka serve` as a child process: the `trafka_broker` fixture's cost.
Prints the medians and the ratio subprocess / in-process; the target is an in-process start
under 50 ms.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.brokers import api_versions_answered, start_trafka
from trafka.testing import TrafkaBroker

TARGET_MS = 50


def in_process_start_ms(config: dict | None = None) -> tuple[float, float]:
    """(ms until the first ApiVersions answer, ms to stop)."""
    data_dir = Path(tempfile.mkdtemp(prefix="bench-inproc-"))
    try:
        started = time.perf_counter()
        broker = TrafkaBroker(data_dir=data_dir / "data", config=config, in_process=True).start()
        while not api_versions_answered(broker.port):
            time.sleep(0.005)
        ready = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        broker.stop()
        return ready, (time.perf_counter() - started) * 1000
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def subprocess_start_ms() -> float:
    broker = start_trafka()
    try:
        return broker.started_in * 1000
    finally:
        broker.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args(argv)
    in_process_start_ms()  # warm-up: the imports a test process pays once
    inproc = [in_process_start_ms() for _ in range(args.runs)]
    kafka_internal = {"offsets.topic.num.partitions": 50, "transaction.state.log.num.partitions": 50}
    kafka_offsets = [in_process_start_ms(kafka_internal)[0] for _ in range(args.runs)]
    sub = [subprocess_start_ms() for _ in range(args.runs)]
    ready = statistics.median(r for r, _ in inproc)
    stop = statistics.median(s for _, s in inproc)
    sub_median = statistics.median(sub)
    print(f"in-process start to first answer: median {ready:.1f} ms [{min(r for r, _ in inproc):.1f}-{max(r for r, _ in inproc):.1f}]"
          f" (target < {TARGET_MS} ms: {'met' if ready < TARGET_MS else 'MISSED'}); stop {stop:.1f} ms")
    print(f"in-process with Kafka's 50 partitions of each internal topic (the subprocess default): "
          f"median {statistics.median(kafka_offsets):.1f} ms")
    print(f"subprocess start to first answer: median {sub_median:.1f} ms [{min(sub):.1f}-{max(sub):.1f}]")
    print(f"ratio subprocess / in-process: {sub_median / ready:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
