"""`TrafkaContainer`: the trafka image under testcontainers, a drop-in for its `KafkaContainer`.

    from trafka.testing import TrafkaContainer          # was: from testcontainers.kafka import KafkaContainer

    with TrafkaContainer() as kafka:                     # was: with KafkaContainer() as kafka:
        producer = KafkaProducer(bootstrap_servers=kafka.get_bootstrap_server())

Needs `pip install testcontainers` and a Docker daemon, like KafkaContainer, and an image built
from this repository's Dockerfile (`docker build -t trafka:latest .`; or set TRAFKA_IMAGE).

Like KafkaContainer, the broker must advertise the host address and the *mapped* port, which
are known only once the container exists: the container starts a command that waits for a
small env file, `start()` writes it (TRAFKA_ADVERTISED_HOST/PORT) and then waits for the
"trafka listening on" line.
"""

from __future__ import annotations

import os
import re
import tarfile
import time
from io import BytesIO

try:
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy
except ImportError as exc:  # pragma: no cover - exercised only without testcontainers
    _IMPORT_ERROR: ImportError | None = exc

    class DockerContainer:  # type: ignore[no-redef]
        def __init__(self, *args, **kwargs):
            raise ImportError("TrafkaContainer needs the testcontainers package: pip install testcontainers") from _IMPORT_ERROR
else:
    _IMPORT_ERROR = None

DEFAULT_IMAGE = "trafka:latest"
START_ENV_FILE = "/tmp/trafka-tc.env"
READY = re.compile(r"trafka listening on")


def start_env(host: str, port: int, config: dict[str, object] | None = None) -> str:
    """The env file the container's command sources before it runs the image's CMD."""
    lines = [f"export TRAFKA_ADVERTISED_HOST={_sh_quote(host)}", f"export TRAFKA_ADVERTISED_PORT={int(port)}"]
    for name, value in (config or {}).items():
        lines.append(f"set -- \"$@\" --config {_sh_quote(f'{name}={value}')}")
    return "\n".join(lines) + "\n"


def _sh_quote(text: str) -> str:
    return "'" + str(text).replace("'", "'\"'\"'") + "'"


# Waits for the env file, then runs the same command as the image's CMD (see the Dockerfile).
WAIT_THEN_SERVE = (
    f"while [ ! -f {START_ENV_FILE} ]; do sleep 0.1; done; . {START_ENV_FILE}; "
    'exec trafka serve --host 0.0.0.0 --port "$TRAFKA_PORT" --data-dir /var/lib/trafka '
    '--config "advertised.host=$TRAFKA_ADVERTISED_HOST" --config "advertised.port=$TRAFKA_ADVERTISED_PORT" "$@"'
)


class TrafkaContainer(DockerContainer):
    """A trafka broker in a container; the same surface as testcontainers' KafkaContainer."""

    def __init__(self, image: str | None = None, port: int = 9092, config: dict[str, object] | None = None, **kwargs) -> None:
        super().__init__(image or os.environ.get("TRAFKA_IMAGE", DEFAULT_IMAGE), **kwargs)
        self.port = port
        self.config = dict(config or {})
        self.wait_for: re.Pattern[str] = READY
        self.with_exposed_ports(self.port)
        self.with_env("TRAFKA_PORT", str(self.port))
        self.with_command(["sh", "-c", WAIT_THEN_SERVE])

    def with_config(self, name: str, value: object) -> "TrafkaContainer":
        """A broker setting by Kafka's name, e.g. with_config("num.partitions", 3)."""
        self.config[name] = value
        return self

    def get_bootstrap_server(self) -> str:
        host = self.get_container_host_ip()
        port = self.get_exposed_port(self.port)
        return f"{host}:{port}"

    def tc_start(self) -> None:
        host = self.get_container_host_ip()
        port = self.get_exposed_port(self.port)
        self.create_file(start_env(host, port, self.config).encode(), START_ENV_FILE)

    def start(self, timeout: int = 30) -> "TrafkaContainer":
        super().start()
        self.tc_start()
        wait_strategy = LogMessageWaitStrategy(self.wait_for)
        wait_strategy.with_startup_timeout(timeout)
        wait_strategy.wait_until_ready(self)
        return self

    def create_file(self, content: bytes, path: str) -> None:
        with BytesIO() as archive, tarfile.TarFile(fileobj=archive, mode="w") as tar:
            info = tarfile.TarInfo(name=path)
            info.size = len(content)
            info.mtime = time.time()
            info.mode = 0o644
            tar.addfile(info, BytesIO(content))
            archive.seek(0)
            self.get_wrapped_container().put_archive("/", archive)
