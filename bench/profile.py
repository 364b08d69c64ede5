"""`python -m bench.profile WORKLOAD [--seconds N]`: run one protocol workload against trafka under
py-spy and print the functions that take the most samples (self and total).

WORKLOAD is produce, metadata, fetch, partitions (create 500 x 10, full Metadata, produce to
each, restarts), create (three CreateTopics of 500 x 10, each followed by the full Metadata that
sees them) or work-queue (bench/work_queue.py: four share consumers, 50,000 records). py-spy must be installed (`pip install py-spy`); the
collapsed stacks are kept in /tmp/trafka-profile-WORKLOAD.txt for a flame graph tool.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import protocol, work_queue
from bench.brokers import _spawn, free_port


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile")
    parser.add_argument("workload", choices=("produce", "metadata", "fetch", "partitions", "create", "work-queue"))
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    pyspy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not os.access(pyspy, os.X_OK):
        print("py-spy is not installed (pip install '.[bench]'); without it, run the broker as "
              "`python -m cProfile -o out -m trafka serve ...` and stop it with SIGINT", file=sys.stderr)
        return 2
    port, data_dir = free_port(), tempfile.mkdtemp(prefix="bench-profile-")
    out = f"/tmp/trafka-profile-{args.workload}.txt"
    argv = [pyspy, "record", "--format", "raw", "--rate", "500", "-o", out, "--",
            sys.executable, "-m", "trafka", "serve", "--host", "127.0.0.1", "--port", str(port),
            "--data-dir", data_dir, "--log-level", "WARNING"]
    broker = _spawn("trafka", argv, port, data_dir)
    try:
        topic = protocol._name("profile")
        protocol.create_topics(port, [topic], 1)
        if args.workload == "produce":
            frame = protocol._produce_frame(topic, protocol._one_record_batch(100), 1)
            print(protocol._pipelined(port, frame, 16, 8, args.seconds), "req/s")
        elif args.workload == "metadata":
            frame = protocol._metadata_frame(topic, 1)
            print(protocol._pipelined(port, frame, 16, 8, args.seconds), "req/s")
        elif args.workload == "work-queue":
            print(work_queue.work_queue(broker, 50_000, 4))
        elif args.workload == "partitions":
            print(protocol.many_partitions(broker))
        elif args.workload == "create":
            for round_ in range(3):
                names = [protocol._name(f"c{round_}-{i}") for i in range(500)]
                print(f"create 500 x 10: {protocol.create_topics(port, names, 10):.3f} s")
        else:
            deadline = time.monotonic() + args.seconds
            while time.monotonic() < deadline:
                print(protocol.fetch_tiny_batches(broker, rounds=100))
    finally:
        broker.process.send_signal(2)  # py-spy writes its output when the child exits
        try:
            broker.process.wait(30)
        except subprocess.TimeoutExpired:
            broker.process.kill()
        shutil.rmtree(data_dir, ignore_errors=True)
    self_counts: collections.Counter = collections.Counter()
    total_counts: collections.Counter = collections.Counter()
    samples = 0
    for line in open(out):
        stack, _, count = line.rstrip().rpartition(" ")
        n = int(count)
        frames = stack.split(";")
        samples += n
        self_counts[frames[-1]] += n
        for f in set(frames):
            total_counts[f] += n
    print(f"{samples} samples; top self:")
    for f, n in self_counts.most_common(25):
        print(f"{n / samples * 100:5.1f}%  {f}")
    print("top total:")
    for f, n in total_counts.most_common(40):
        print(f"{n / samples * 100:5.1f}%  {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
