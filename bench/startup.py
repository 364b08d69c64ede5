"""`python -m bench.startup [--runs N]`: how fast a broker answers after it is asked to start.

Each run starts a process on a free loopback port and times from the spawn to the first valid
answer to an ApiVersions request (polled every 5 ms, as `bench.brokers` does for every broker):
- the floor: a minimal Python TCP server (the same interpreter, `socket` only) that answers any
  request with one canned frame — what any Python broker pays before its first line of work;
- a minimal trio server, the same answer: the event loop's own import, which trafka pays too;
- `trafka serve` with its defaults (console and schema registry on, here on free ports; Kafka's
  50 + 50 internal partitions) on a fresh data dir: the `trafka_broker` fixture's cost.
The three are interleaved run by run, so a busy machine slows them alike; the ratio of the medians
trafka / floor is the figure (target: within 5x).
Then `TrafkaBroker(in_process=True)`: trio in a thread of this process (imports paid once, by a
warm-up run that is not counted), the way a pytest suite with a broker per test uses it; its
default is one partition per internal topic (target: under 50 ms).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.brokers import api_versions_answered, compile_trafka, free_port
from trafka.testing import TrafkaBroker

SERVE_TARGET = 5.0  # trafka serve / the minimal Python server
IN_PROCESS_TARGET_MS = 50

# Answers any request with a frame of the request's correlation id and an empty body.
MINIMAL_PYTHON = """
import socket, sys
server = socket.socket()
server.bind(("127.0.0.1", int(sys.argv[1])))
server.listen(16)
while True:
    conn, _ = server.accept()
    request = conn.recv(65536)
    conn.sendall(b"\\0\\0\\0\\x0a" + request[8:12] + bytes(6))
    conn.close()
"""
MINIMAL_TRIO = """
import sys
from functools import partial
import trio
async def answer(stream):
    request = await stream.receive_some(65536)
    await stream.send_all(b"\\0\\0\\0\\x0a" + request[8:12] + bytes(6))
trio.run(partial(trio.serve_tcp, answer, int(sys.argv[1]), host="127.0.0.1"))
"""


def first_answer_ms(argv: list[str], port: int, timeout: float = 30) -> float:
    """Spawn argv, poll until it answers ApiVersions, stop it; ms from the spawn to the answer."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        while not api_versions_answered(port):
            if process.poll() is not None or time.perf_counter() - started > timeout:
                raise RuntimeError(f"did not answer: {' '.join(argv)}")
            time.sleep(0.005)
        return (time.perf_counter() - started) * 1000
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def floor_ms(code: str) -> float:
    port = free_port()
    return first_answer_ms([sys.executable, "-c", code, str(port)], port)


def serve_ms() -> float:
    """`trafka serve` with the console and the schema registry on (free ports: a default port
    another process holds would start the broker without them, which is less work)."""
    port, data_dir = free_port(), tempfile.mkdtemp(prefix="bench-startup-")
    try:
        return first_answer_ms([sys.executable, "-m", "trafka", "serve", "--host", "127.0.0.1", "--port", str(port),
                                "--data-dir", f"{data_dir}/data", "--log-level", "WARNING",
                                "--config", "console.port=0", "--config", "schema.registry.port=0"], port)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


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


def _summary(values: list[float]) -> str:
    return f"median {statistics.median(values):.0f} ms [{min(values):.0f}-{max(values):.0f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args(argv)
    compile_trafka()
    python_floor, trio_floor, serve = [], [], []
    for _ in range(args.runs):  # interleaved: a busy moment slows all three
        python_floor.append(floor_ms(MINIMAL_PYTHON))
        trio_floor.append(floor_ms(MINIMAL_TRIO))
        serve.append(serve_ms())
    floor, ratio = statistics.median(python_floor), statistics.median(serve) / statistics.median(python_floor)
    print(f"minimal Python server, spawn to first answer: {_summary(python_floor)}")
    print(f"minimal trio server: {_summary(trio_floor)} ({statistics.median(trio_floor) / floor:.1f}x the Python floor)")
    print(f"trafka serve (console and schema registry on), spawn to first ApiVersions: {_summary(serve)}")
    print(f"ratio trafka serve / minimal Python server: {ratio:.1f}x (target <= {SERVE_TARGET:.0f}x: "
          f"{'met' if ratio <= SERVE_TARGET else 'MISSED'}); trafka serve / minimal trio server: "
          f"{statistics.median(serve) / statistics.median(trio_floor):.1f}x")

    in_process_start_ms()  # warm-up: the imports a test process pays once
    inproc = [in_process_start_ms() for _ in range(args.runs)]
    ready = statistics.median(r for r, _ in inproc)
    stop = statistics.median(s for _, s in inproc)
    print(f"in-process start to first answer: median {ready:.1f} ms [{min(r for r, _ in inproc):.1f}-"
          f"{max(r for r, _ in inproc):.1f}] (target < {IN_PROCESS_TARGET_MS} ms: "
          f"{'met' if ready < IN_PROCESS_TARGET_MS else 'MISSED'}); stop {stop:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
