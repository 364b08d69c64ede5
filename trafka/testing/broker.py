"""`TrafkaBroker`: one broker, started on a free loopback port: a child process, or
(`in_process=True`) trio in a background thread of the test process.

Both offer the same control: stop, kill, restart, `advance_clock`, `inject_fault`, `faults`,
`clear_faults`, `snapshot`. `console_url` is where its console, JSON API and /metrics listen
(a free port unless `console.port` is given; None with console.port=-1), `schema_registry_url` where its
schema registry does (`schema.registry.port`, likewise), `rest_proxy_url` its REST proxy (`rest.proxy.port`). In process they run on the broker's trio thread; for a child
process they go over its HTTP control endpoints (`/api/v1/clock`, `/api/v1/faults`...).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

_LISTENING = re.compile(r"trafka listening on (\S+):(\d+)")
_CONSOLE = re.compile(r"console at (http://[^\s;]+)")
_SCHEMA_REGISTRY = re.compile(r"schema registry at (http://[^\s;]+)")
_REST_PROXY = re.compile(r"REST proxy at (http://[^\s;]+)")
_CLUSTER_NODES = re.compile(r"broker (\d+) on (\S+?:\d+)")
_LISTENERS = re.compile(r"listeners ((?:\S+=\S+:\d+ ?)+)")
_FREE_PORT = re.compile(r"^([A-Za-z0-9_]+)://([^,]*):0$")
START_TIMEOUT_SECONDS = 30


def _byte_compile_once() -> None:
    """Write trafka's bytecode cache once per test process when the interpreter would not
    (PYTHONDONTWRITEBYTECODE, which CI images often set, with an editable install, which pip
    does not compile): otherwise every broker process compiled every module again, ~0.3 s on
    top of a ~0.25 s start. Up to date, this is a stat per module; a read-only install skips it."""
    if not sys.dont_write_bytecode or getattr(_byte_compile_once, "done", False):
        return
    import compileall

    import trafka

    compileall.compile_dir(os.path.dirname(trafka.__file__), quiet=2)
    _byte_compile_once.done = True


class BrokerFailedToStart(RuntimeError):
    pass


class InjectedFault:
    """What `inject_fault` returns: the fault's id and description; as a context manager the
    fault is removed when the block ends (if it has not run out already)."""

    def __init__(self, broker: "TrafkaBroker", description: dict):
        self.broker = broker
        self.id = description["id"]
        self.description = description

    def remove(self) -> bool:
        return self.broker.remove_fault(self.id)

    def __enter__(self) -> "InjectedFault":
        return self

    def __exit__(self, *exc) -> None:
        if self.broker.running:
            self.remove()

    def __repr__(self) -> str:
        return f"InjectedFault({self.description})"


class TrafkaBroker:
    """A broker process; restartable on the same port and data directory."""

    def __init__(
        self,
        data_dir: str | Path | None = None,
        config: dict[str, object] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        in_process: bool = False,
    ):
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="trafka-"))
        self.config = dict(config or {})
        self.host = host
        self.port = port
        self.in_process = in_process
        self.process: subprocess.Popen | None = None
        # The console on a free port unless the test asks for one (console.port=-1: off); a
        # restart keeps the port it got, as it keeps the Kafka port.
        self.console_port = int(self.config.get("console.port", 0))
        self.console_url: str | None = None
        # The schema registry likewise (schema.registry.port=-1: off).
        self.schema_registry_port = int(self.config.get("schema.registry.port", 0))
        self.schema_registry_url: str | None = None
        # The REST proxy likewise (rest.proxy.port=-1: off).
        self.rest_proxy_port = int(self.config.get("rest.proxy.port", 0))
        self.rest_proxy_url: str | None = None
        # With `listeners` set: each listener's bound port by name, kept across restarts.
        self.listener_ports: dict[str, int] = {}
        # A simulated cluster (config cluster.brokers > 1): each broker's host:port by node id.
        self.broker_addresses: dict[int, str] = {}
        self._thread_broker = None  # the InProcessBroker while running in process
        self.log_path = self.data_dir.parent / f"{self.data_dir.name}.broker.log"
        self._log_file = None

    @property
    def bootstrap_servers(self) -> str:
        """host:port, or in a simulated cluster every broker's, comma-separated."""
        if self.broker_addresses:
            return ",".join(self.broker_addresses[i] for i in sorted(self.broker_addresses))
        return f"{self.host}:{self.port}"

    def get_bootstrap_server(self) -> str:
        return self.bootstrap_servers

    def bootstrap(self, listener: str) -> str:
        """host:port of one of the `listeners` (e.g. "SASL_SSL")."""
        return f"{self.host}:{self.listener_ports[listener.upper()]}"

    def _start_config(self) -> dict[str, object]:
        """The settings for this start: free listener ports (`NAME://host:0`) become the ports
        bound the first time, and a simulated cluster's brokers the ports each got, so a restart
        comes back where clients expect it."""
        config = dict(self.config)
        if "listeners" in config and self.listener_ports:
            endpoints = []
            for item in str(config["listeners"]).split(","):
                match = _FREE_PORT.match(item.strip())
                if match and match.group(1).upper() in self.listener_ports:
                    item = f"{match.group(1)}://{match.group(2)}:{self.listener_ports[match.group(1).upper()]}"
                endpoints.append(item.strip())
            config["listeners"] = ",".join(endpoints)
        if len(self.broker_addresses) > 1 and not str(config.get("cluster.broker.ports", "")).strip():
            # Each broker of a simulated cluster where it listened, not broker 0's port + i: no
            # one held those for it (a client's ephemeral port may sit there).
            config["cluster.broker.ports"] = ",".join(
                self.broker_addresses[i].rsplit(":", 1)[1] for i in sorted(self.broker_addresses))
        return config

    @property
    def running(self) -> bool:
        if self.in_process:
            return self._thread_broker is not None and self._thread_broker.alive
        return self.process is not None and self.process.poll() is None

    def start(self) -> "TrafkaBroker":
        if self.process is not None or self._thread_broker is not None:
            raise RuntimeError("broker is already running")
        if self.in_process:
            return self._start_in_process()
        _byte_compile_once()
        cmd = [sys.executable, "-m", "trafka", "serve", "--host", self.host, "--port", str(self.port), "--data-dir", str(self.data_dir)]
        for name, value in {**self._start_config(), "console.port": self.console_port,
                            "schema.registry.port": self.schema_registry_port, "rest.proxy.port": self.rest_proxy_port}.items():
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
        self._set_console_url((_CONSOLE.search(result[0]) or [None, None])[1])
        self._set_schema_registry_url((_SCHEMA_REGISTRY.search(result[0]) or [None, None])[1])
        self._set_rest_proxy_url((_REST_PROXY.search(result[0]) or [None, None])[1])
        self.broker_addresses = {int(i): address for i, address in _CLUSTER_NODES.findall(result[0])}
        listeners = _LISTENERS.search(result[0])
        if listeners:
            for item in listeners.group(1).split():
                name, _, address = item.partition("=")
                self.listener_ports[name] = int(address.rsplit(":", 1)[1])
        # Keep draining stdout so the child never blocks on a full pipe.
        threading.Thread(target=self.process.stdout.read, daemon=True).start()
        return int(match.group(2))

    def _start_in_process(self) -> "TrafkaBroker":
        from trafka.testing.in_process import InProcessBroker

        # One partition for each internal topic unless the test says otherwise (as testcontainers'
        # Kafka setups do): creating Kafka's 50 + 50 is most of a fresh broker's start-up.
        config = {"offsets.topic.num.partitions": 1, "transaction.state.log.num.partitions": 1, **self._start_config(),
                  "console.port": self.console_port, "schema.registry.port": self.schema_registry_port,
                  "rest.proxy.port": self.rest_proxy_port}
        runner = InProcessBroker(self.data_dir, config, self.host, self.port, self.log_path)
        try:
            self.port = runner.start(START_TIMEOUT_SECONDS)
        except Exception as exc:
            raise BrokerFailedToStart(f"broker did not start: {exc}\nits log:\n{self.log_text()}") from exc
        self._thread_broker = runner
        self.listener_ports = {listener.name: listener.port for listener in runner.broker.listeners}
        self.broker_addresses = {node.node_id: f"{node.host}:{node.port}" for node in runner.broker.cluster.nodes}
        self._set_console_url(runner.broker.console_url)
        self._set_schema_registry_url(runner.broker.schema_registry_url)
        self._set_rest_proxy_url(runner.broker.rest_proxy_url)
        return self

    def _set_console_url(self, url: str | None) -> None:
        """Remember where the console listens (None: off), so a restart reuses its port."""
        self.console_url = url
        if url:
            self.console_port = int(url.rstrip("/").rsplit(":", 1)[1])

    def _set_schema_registry_url(self, url: str | None) -> None:
        self.schema_registry_url = url
        if url:
            self.schema_registry_port = int(url.rstrip("/").rsplit(":", 1)[1])

    def _set_rest_proxy_url(self, url: str | None) -> None:
        self.rest_proxy_url = url
        if url:
            self.rest_proxy_port = int(url.rstrip("/").rsplit(":", 1)[1])

    def stop(self, timeout: float = 15) -> int | None:
        """SIGTERM and wait: a clean shutdown (in process: cancel serving, close the logs)."""
        if self._thread_broker is not None:
            self._thread_broker.stop(timeout)
            self._thread_broker = None
            return 0
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
        """SIGKILL: the broker gets no chance to flush or close anything (in process: serving
        stops at once and the files are closed without flush or clean-shutdown marker)."""
        if self._thread_broker is not None:
            self._thread_broker.kill()
            self._thread_broker = None
            return
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

    # --- test control -----------------------------------------------------------------------

    def _control(self, method: str, path: str, body: dict | None = None):
        """A control call: on the broker's trio thread in process, else over HTTP."""
        if not self.running:
            raise RuntimeError("the broker is not running")
        if self.in_process:
            from trafka.broker.testcontrol import endpoints

            return self._thread_broker.call(endpoints.handle, self._thread_broker.broker, method, path, body)
        return _http_control(self, method, path, body)

    def clock(self) -> dict:
        """Broker time: {"time_ms": wall clock + offset, "offset_ms": the offset}."""
        return self._control("GET", "/api/v1/clock")

    def advance_clock(self, ms: int) -> dict:
        """Move broker time forward by `ms`; every background check now due runs at once."""
        return self._control("POST", "/api/v1/clock/advance", {"ms": ms})

    def inject_fault(self, api=None, *, error=None, count: int | None = None, delay_ms: int | None = None,
                     drop_connection: bool = False, throttle_ms: int | None = None, topic: str | None = None,
                     partition: int | None = None, down_ms: int | None = None,
                     append_fails: bool = False) -> InjectedFault:
        """Arm a fault (see docs/testing.md): e.g. `inject_fault("Produce", error="NOT_LEADER_OR_FOLLOWER",
        count=3)`, `inject_fault("Metadata", delay_ms=1500, count=1)`, `inject_fault(down_ms=2000)`,
        `inject_fault(append_fails=True, topic="__consumer_offsets")` (a coordinator's writes fail).
        Without `count` it applies until removed. Bad names or values raise ValueError."""
        spec = {"api": api, "error": error, "count": count, "delay_ms": delay_ms,
                "drop_connection": drop_connection or None, "throttle_ms": throttle_ms, "topic": topic,
                "partition": partition, "down_ms": down_ms, "append_fails": append_fails or None}
        description = self._control("POST", "/api/v1/faults", {k: v for k, v in spec.items() if v is not None})
        return InjectedFault(self, description)

    def faults(self) -> list[dict]:
        """Each armed fault with its id, what it does, `remaining` and `fired`."""
        return self._control("GET", "/api/v1/faults")

    def remove_fault(self, fault_id: int) -> bool:
        try:
            return self._control("DELETE", f"/api/v1/faults/{fault_id}")["removed"] > 0
        except LookupError:
            return False

    def clear_faults(self) -> int:
        return self._control("DELETE", "/api/v1/faults")["removed"]

    def snapshot(self, path: str | Path) -> Path:
        """Copy a consistent image of the data dir to `path` (the broker pauses for the copy).
        `TrafkaBroker(data_dir=copy)` starts from it."""
        self._control("POST", "/api/v1/snapshot", {"path": str(Path(path).absolute())})
        return Path(path)

    # --- a simulated cluster (config cluster.brokers > 1) ----------------------------------------

    def brokers(self) -> list[dict]:
        """Each broker: node_id, alive, host, port, rack."""
        return self._control("GET", "/api/v1/brokers")

    def stop_broker(self, node_id: int) -> dict:
        """Stop one broker of the cluster (a clean shutdown): its connections close, its
        partitions elect new leaders from their ISRs, its coordinators move."""
        return self._control("POST", f"/api/v1/brokers/{node_id}/stop")

    def kill_broker(self, node_id: int) -> dict:
        """Stop one broker as kill -9 would: no flush, no clean-shutdown marker."""
        return self._control("POST", f"/api/v1/brokers/{node_id}/kill")

    def start_broker(self, node_id: int, timeout: float = 10) -> dict:
        """Start a stopped broker again on its ports; returns once it accepts connections (it
        rejoins each ISR when it has caught up)."""
        answer = self._control("POST", f"/api/v1/brokers/{node_id}/start")
        # A broker on its own (a cluster of one) is where the bootstrap address says.
        host, port = self.broker_addresses.get(node_id, f"{self.host}:{self.port}").rsplit(":", 1)
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
                return answer
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def pause_replication(self, node_id: int) -> dict:
        """Hold broker `node_id`'s replica fetchers: its replicas fall behind (and out of the ISRs
        after replica.lag.time.max.ms of broker time)."""
        return self._control("POST", f"/api/v1/brokers/{node_id}/pause-replication")

    def resume_replication(self, node_id: int) -> dict:
        return self._control("POST", f"/api/v1/brokers/{node_id}/resume-replication")

    def partition_state(self, topic: str, partition: int) -> dict:
        """leader, leader_epoch, replicas, isr and reassigning_to of one partition."""
        return self._control("GET", f"/api/v1/partitions/{topic}/{partition}")

    def move_leader(self, topic: str, partition: int, broker: int) -> dict:
        """Make in-sync replica `broker` the partition's leader now (leader epoch + 1)."""
        return self._control("POST", f"/api/v1/partitions/{topic}/{partition}/leader", {"broker": broker})

    def reassign_partition(self, topic: str, partition: int, replicas: list[int] | None) -> dict:
        """Move the partition to `replicas` (None cancels a move under way); the move finishes
        once the new replicas have caught up."""
        return self._control("POST", f"/api/v1/partitions/{topic}/{partition}/reassign", {"replicas": replicas})

    def nemesis(self, *, seed: int, duration_s: float, faults: list[str] | None = None, max_down: int = 1,
                wait: bool = True) -> dict:
        """Run a seeded fault schedule on this broker or simulated cluster (docs/nemesis.md):
        `faults` are kinds (stop, kill, bounce, isolate, cut, down, leader, coordinator,
        reassign, pause, create, errors, delays, drops, clock; all that apply when None), never
        more than `max_down` brokers down (stopped, killed, isolated or down) at once. With
        `wait` it returns the report once the run is over and healed; else at once (follow it
        with `nemesis_report()`, end it with `stop_nemesis()`). The same seed and settings give
        the same faults on the same targets in the same order: a failure replays."""
        body = {"seed": seed, "duration_s": duration_s, "faults": list(faults or []), "max_down": max_down}
        report = self._control("POST", "/api/v1/nemesis", body)
        deadline = time.monotonic() + duration_s + 60
        while wait and report["state"] == "running":
            if time.monotonic() > deadline:
                self.stop_nemesis()
                raise TimeoutError(f"the nemesis (seed {seed}) did not end within {duration_s + 60:.0f} s")
            time.sleep(0.1)
            report = self.nemesis_report()
        return report

    def nemesis_report(self) -> dict:
        """The running (or last) nemesis: state, settings, faults done so far, what it healed."""
        return self._control("GET", "/api/v1/nemesis")

    def stop_nemesis(self) -> dict:
        """Stop the running nemesis; everything it did is healed when this returns."""
        return self._control("DELETE", "/api/v1/nemesis")

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


def _http_control(broker: TrafkaBroker, method: str, path: str, body: dict | None):
    """A control call to a child-process broker, over its console's HTTP control endpoints;
    the broker's 400/404/403 answers come back as ValueError/LookupError/PermissionError."""
    import json
    import urllib.error
    import urllib.request

    if not broker.console_url:
        raise RuntimeError("this broker runs without its console (console.port=-1), so it has no control endpoints")
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(broker.console_url.rstrip("/") + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("error", exc.reason)
        except ValueError:
            message = exc.reason
        raise {400: ValueError, 404: LookupError, 403: PermissionError}.get(exc.code, RuntimeError)(message) from None
