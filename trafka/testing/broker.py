"""`TrafkaBroker`: one broker process, started on a free loopback port."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

_LISTENING = re.compile(r"trafka listening on (\S+):(\d+)")
START_TIMEOUT_SECONDS = 30


class BrokerFailedToStart(RuntimeError):
    pass


class TrafkaBroker:
    """A broker process; restartable on the same port and data directory."""

    def __init__(
        self,
        data_dir: str | Path | None = None,
        config: dict[str, object] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="trafka-"))
        self.config = dict(config or {})
        self.host = host
        self.port = port
        self.process: subprocess.Popen | None = None
        self.log_path = self.data_dir.parent / f"{self.data_dir.name}.broker.log"
        self._log_file = None

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    def get_bootstrap_server(self) -> str:
        return self.bootstrap_servers

    def start(self) -> "TrafkaBroker":
        if self.process is not None:
            raise RuntimeError("broker is already running")
        cmd = [sys.executable, "-m", "trafka", "serve", "--host", self.host, "--port", str(self.port), "--data-dir", str(self.data_dir)]
        for name, value in self.config.items():
            cmd += ["--config", f"{name}={value}"]
        self._log_file = open(self.log_path, "ab")
        self.process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self._log_file, stdin=subprocess.DEVNULL)
        port = self._wait_until_listening()
        self.port = port
        return self

    def _wait_until_listening(self) -> int:
        result: list[str] = []
        reader = threading.Thread(target=lambda: result.append(self.process.stdout.readline().decode()), daemon=True)
        reader.start()
        reader.join(START_TIMEOUT_SECONDS)
        match = _LISTENING.search(result[0]) if result else None
        if match is None:
            self.kill()
            raise BrokerFailedToStart(f"broker did not start; its log:\n{self.log_text()}")
        # Keep draining stdout so the child never blocks on a full pipe.
        threading.Thread(target=self.process.stdout.read, daemon=True).start()
        return int(match.group(2))

    def stop(self, timeout: float = 15) -> int | None:
        """SIGTERM and wait: a clean shutdown."""
        if self.process is None:
            return None
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self._reap()
        return code

    def kill(self) -> None:
        """SIGKILL: the broker gets no chance to flush or close anything."""
        if self.process is None:
            return
        self.process.kill()
        self.process.wait()
        self._reap()

    def restart(self, *, kill: bool = False) -> "TrafkaBroker":
        """Stop (or kill) and start again on the same port with the same data."""
        self.kill() if kill else self.stop()
        deadline = time.monotonic() + 10
        while True:
            try:
                return self.start()
            except BrokerFailedToStart:
                if time.monotonic() > deadline:
                    raise
                self.process = None
                time.sleep(0.2)

    def _reap(self) -> None:
        if self.process and self.process.stdout:
            self.process.stdout.close()
        self.process = None
        if self._log_file:
            self._log_file.close()
            self._log_file = None

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            try:
                os.unlink(self.log_path)
            except OSError:
                pass

    def __enter__(self) -> "TrafkaBroker":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
