"""`python -m bench.loop_blocking [--seconds S]`: produce latency while compaction and rolls run.

One client produces one small record at a time (acks=1) to its own topic and times each answer,
while a second client writes 1 MB batches of keyed records to a compacted topic with 4 MB
segments: a roll every four batches (each fsyncing the rolled segment) and a cleaner pass every
`log.cleaner.backoff.ms` over a dirty part of up to ~100k records. Two runs of a `trafka serve`
child process:
- "threads": as shipped; compaction, the roll's fsync and DeleteTopics' rmtree in worker threads;
- "inline": the same broker with that work forced back onto the event loop (the reference, how
  trafka ran before), by patching `trio.to_thread.run_sync` to call inline and rolls to flush at
  once.
Prints p50, p99 and max produce latency per run and the p99 ratio inline / threads.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from trafka.testing.rawwire import RawClient
from trafka.wire import records

_INLINE = """
import trio, trafka.broker.operations.log_tasks as lt, trafka.broker.server as server
async def _inline(fn, *args, **kwargs):
    return fn(*args)
trio.to_thread.run_sync = _inline
_tasks = lt.storage_tasks
def _storage_tasks(broker):
    tasks = _tasks(broker)
    broker.logs.on_roll = None
    return tasks
server.storage_tasks = _storage_tasks
"""
_SERVE = "import sys\nfrom trafka.cli import main\nsys.exit(main(sys.argv[1:]))\n"
CONFIG = {"log.cleaner.backoff.ms": "300", "offsets.topic.num.partitions": "1", "transaction.state.log.num.partitions": "1"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _create(client: RawClient, name: str, configs: dict[str, str]) -> None:
    body = client.request(19, 4, {"topics": [{"name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [],
                                              "configs": [{"name": k, "value": v} for k, v in configs.items()]}],
                                  "timeout_ms": 10000, "validate_only": False})
    assert body.topics[0].error_code == 0, body


def _produce(client: RawClient, topic: str, batch: bytes, acks: int = 1) -> None:
    body = client.request(0, 7, {"transactional_id": None, "acks": acks, "timeout_ms": 10000,
                                 "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}]})
    assert body.responses[0].partition_responses[0].error_code == 0, body


def _big_batch(i: int) -> bytes:
    # 1,000 keys rewritten over and over: almost everything is compactable.
    return records.encode_batch([records.Record(b"key-%d" % ((i * 8_000 + j) % 1_000), b"v" * 90, (), int(time.time() * 1000))
                                 for j in range(8_000)])


def run(mode: str, seconds: float) -> list[float]:
    data_dir = Path(tempfile.mkdtemp(prefix=f"bench-loop-{mode}-"))
    port = _free_port()
    code = (_INLINE if mode == "inline" else "") + _SERVE
    args = ["serve", "--port", str(port), "--data-dir", str(data_dir / "data"), "--log-level", "WARNING"]
    for name, value in CONFIG.items():
        args += ["--config", f"{name}={value}"]
    broker = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        broker.stdout.readline()  # "trafka listening on ..."
        admin = RawClient(f"127.0.0.1:{port}", "bench-admin")
        _create(admin, "latency", {})
        _create(admin, "compacted", {"cleanup.policy": "compact", "segment.bytes": str(4 << 20),
                                     "min.cleanable.dirty.ratio": "0.01"})
        batches = [_big_batch(i) for i in range(8)]
        for batch in batches[:4]:
            _produce(admin, "compacted", batch)
        stop = threading.Event()

        def writer():
            with RawClient(f"127.0.0.1:{port}", "bench-writer") as client:
                i = 0
                while not stop.is_set():
                    _produce(client, "compacted", batches[i % len(batches)])
                    i += 1

        thread = threading.Thread(target=writer, daemon=True)
        thread.start()
        latencies = []
        small = records.encode_batch([records.Record(b"k", b"v", (), 0)])
        with RawClient(f"127.0.0.1:{port}", "bench-latency") as client:
            deadline = time.perf_counter() + seconds
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                _produce(client, "latency", small)
                latencies.append((time.perf_counter() - started) * 1000)
        stop.set()
        thread.join(30)
        admin.close()
        return latencies
    finally:
        broker.terminate()
        try:
            broker.wait(30)
        except subprocess.TimeoutExpired:
            broker.kill()
        shutil.rmtree(data_dir, ignore_errors=True)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="length of each measured run (default 8)")
    args = parser.parse_args()
    results = {}
    for mode in ("inline", "threads"):
        latencies = run(mode, args.seconds)
        results[mode] = _quantile(latencies, 0.99)
        print(f"{mode:8} produce latency ms: p50 {_quantile(latencies, 0.5):7.2f}  p99 {results[mode]:7.2f}  "
              f"max {max(latencies):8.2f}  ({len(latencies)} requests)", flush=True)
    print(f"p99 ratio inline / threads: {results['inline'] / results['threads']:.1f}x")


if __name__ == "__main__":
    main()
