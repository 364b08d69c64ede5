"""Build the trafka image with podman and run it without a container engine: in a chroot.

`podman run` needs more than this kind of machine allows, but `podman build --isolation chroot`
works as root. So the image is built for real from the repo's Dockerfile, then its root
filesystem is mounted read-only (`podman image mount`) and its CMD runs under `chroot`, as
the image's USER, with the image's ENV and WORKDIR, in a private mount namespace where a
temporary directory is bind-mounted on the declared VOLUME. The network is the host's, so
the test sets TRAFKA_HOST=127.0.0.1 and a free TRAFKA_PORT (the image reads both).

Base image: $TRAFKA_CONTAINER_BASE if set (e.g. python:3.11-slim where a registry is
reachable); otherwise localhost/trafka-base:bookworm, built once by build_base.sh with
debootstrap from Debian's packages and then reused.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "container"
LOCAL_BASE = "localhost/trafka-base:bookworm"
IMAGE = "localhost/trafka:test"
BUILD_TIMEOUT = 600
BASE_TIMEOUT = 900


def containers_conf() -> Path:
    """podman's defaults set ulimits that this sandbox refuses; an empty list avoids that."""
    CACHE.mkdir(parents=True, exist_ok=True)
    conf = CACHE / "containers.conf"
    text = "[containers]\ndefault_ulimits = []\n"
    if not conf.exists() or conf.read_text() != text:
        conf.write_text(text)
    return conf


def podman_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("CONTAINERS_CONF", str(containers_conf()))
    return env


def podman(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", *args], env=podman_env(), capture_output=True, text=True, timeout=timeout, check=check)


def engine_problem() -> str | None:
    """Why the image cannot be built and chroot-run here, or None if it can."""
    if os.environ.get("TRAFKA_SKIP_CONTAINER"):
        return "TRAFKA_SKIP_CONTAINER is set"
    if shutil.which("podman") is None:
        return ("podman is not installed: `make test` installs it as root via "
                "tests/container/setup_podman.sh (apt-get install podman debootstrap)")
    if os.geteuid() != 0:
        return "building with podman --isolation chroot and running the image in a chroot need root"
    for tool in ("unshare", "chroot", "mount"):
        if shutil.which(tool) is None:
            return f"{tool} (util-linux/coreutils) is not installed"
    try:
        podman("info", timeout=60)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        return f"podman cannot run here (`podman info` failed): {getattr(exc, 'stderr', '') or exc}"
    if not os.environ.get("TRAFKA_CONTAINER_BASE") and shutil.which("debootstrap") is None:
        return "no base image: debootstrap is not installed and TRAFKA_CONTAINER_BASE is not set"
    return None


def ensure_base() -> str:
    base = os.environ.get("TRAFKA_CONTAINER_BASE")
    if base:
        return base
    started = time.monotonic()
    for attempt in (1, 2):  # debootstrap downloads from Debian's mirror: one retry for a network blip
        try:
            res = subprocess.run(["bash", str(REPO / "tests/container/build_base.sh"), LOCAL_BASE], env=podman_env(),
                                 capture_output=True, text=True, timeout=BASE_TIMEOUT)
        except subprocess.TimeoutExpired:
            res = subprocess.CompletedProcess([], 1, "", f"timed out after {BASE_TIMEOUT}s")
        if res.returncode == 0:
            break
    else:
        # Not trafka's fault (the mirror or the machine): say so rather than fail the suite.
        pytest.skip(f"could not build the local Debian base image (twice):\n{res.stdout}\n{res.stderr[-3000:]}")
    print(f"[container] base {LOCAL_BASE}: {time.monotonic() - started:.1f}s ({res.stdout.strip()})")
    return LOCAL_BASE


def build_image(base: str) -> float:
    """`podman build` of the repo's Dockerfile; returns the seconds it took."""
    cmd = ["build", "-q", "--isolation", "chroot", "--format", "docker", "--build-arg", f"BASE={base}", "-t", IMAGE]
    # pip inside the build must trust the same CAs as this machine (TLS-intercepting proxies).
    ca = os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt"
    if Path(ca).is_file():
        cmd += ["-v", f"{ca}:/run/host-ca.crt:ro", "--build-arg", "PIP_CA_BUNDLE=/run/host-ca.crt"]
    started = time.monotonic()
    for attempt in (1, 2):  # pip inside the build reaches PyPI: one retry for a network blip
        res = podman(*cmd, str(REPO), timeout=BUILD_TIMEOUT, check=False)
        if res.returncode == 0:
            break
    if res.returncode != 0:
        pytest.fail(f"podman build failed:\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}")
    return time.monotonic() - started


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ChrootContainer:
    """The image's CMD, run in its root filesystem under chroot; the VOLUME is a host directory."""

    def __init__(self, rootfs: Path, config: dict, volume: Path, env: dict[str, str]):
        self.rootfs = rootfs
        self.config = config
        self.volume = volume
        self.env = env
        self.process: subprocess.Popen | None = None
        self.output: list[str] = []

    def _user(self) -> str:
        user = self.config.get("User") or "root"
        if ":" in user or user.isdigit():
            return user
        for line in (self.rootfs / "etc/passwd").read_text().splitlines():
            fields = line.split(":")
            if fields[0] == user:
                return f"{fields[2]}:{fields[3]}"
        raise LookupError(f"user {user!r} is not in the image's /etc/passwd")

    def image_env(self) -> dict[str, str]:
        env = dict(item.split("=", 1) for item in self.config.get("Env") or [])
        env.update(self.env)
        return env

    def chroot_command(self, argv: list[str]) -> list[str]:
        """A command that runs argv inside the image, as its user, in its WORKDIR."""
        volumes = list((self.config.get("Volumes") or {}).keys())
        assert volumes == ["/var/lib/trafka"], volumes
        mounts = [
            f"mount --bind {shlex.quote(str(self.volume))} {shlex.quote(str(self.rootfs))}{volumes[0]}",
            f"mount --rbind /dev {shlex.quote(str(self.rootfs))}/dev",
        ]
        workdir = self.config.get("WorkingDir") or "/"
        inner = f"cd {shlex.quote(workdir)} && exec \"$@\""
        script = " && ".join(mounts) + f' && exec chroot --userspec={self._user()} {shlex.quote(str(self.rootfs))} sh -c {shlex.quote(inner)} sh "$@"'
        # A private mount namespace: the bind mounts vanish with the process.
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *argv]

    def start(self, timeout: float = 30) -> "ChrootContainer":
        entrypoint = self.config.get("Entrypoint") or []
        cmd = entrypoint + (self.config.get("Cmd") or [])
        self.output = []
        began = time.monotonic()
        self.process = subprocess.Popen(self.chroot_command(cmd), env=self.image_env(), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ready = threading.Event()

        def pump():
            for line in self.process.stdout:
                self.output.append(line)
                if "trafka listening on" in line:
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        ready.wait(timeout)
        if self.process.poll() is not None or not any("trafka listening on" in line for line in self.output):
            self.stop()
            raise RuntimeError("the image's CMD did not start a broker; its output:\n" + "".join(self.output))
        self.started_in = time.monotonic() - began
        print(f"[container] image CMD in chroot: listening after {self.started_in:.2f}s")
        return self

    def exec(self, argv: list[str], timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run(self.chroot_command(argv), env=self.image_env(), capture_output=True, text=True, timeout=timeout)

    def healthcheck(self) -> subprocess.CompletedProcess:
        test = (self.config.get("Healthcheck") or {}).get("Test") or []
        assert test and test[0] == "CMD", f"image has no exec-form HEALTHCHECK: {test}"
        return self.exec(test[1:])

    def stop(self, timeout: float = 15) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        code = self.process.returncode
        self.process = None
        return code


@pytest.fixture(scope="session")
def trafka_image():
    """The image, built from the repo's Dockerfile; its config; its mounted root filesystem."""
    problem = engine_problem()
    if problem:
        pytest.skip(f"container image test needs podman: {problem}")
    base = ensure_base()
    seconds = build_image(base)
    print(f"[container] podman build {IMAGE} from {base}: {seconds:.1f}s")
    info = json.loads(podman("image", "inspect", IMAGE).stdout)[0]
    config = dict(info["Config"])
    config["Healthcheck"] = info.get("Healthcheck") or config.get("Healthcheck")
    rootfs = Path(podman("image", "mount", IMAGE).stdout.strip())
    try:
        yield {"rootfs": rootfs, "config": config, "size": info.get("Size"), "build_seconds": seconds}
    finally:
        podman("image", "unmount", "--force", IMAGE, check=False)
        podman("rmi", "--force", IMAGE, check=False)


@pytest.fixture
def run_image(trafka_image, tmp_path):
    """Start the image's CMD in a chroot on a free loopback port; stopped after the test."""
    started: list[ChrootContainer] = []
    volume = tmp_path / "volume"
    volume.mkdir()

    def run(env: dict[str, str] | None = None) -> ChrootContainer:
        # The volume belongs to the image's user, as the image's own /var/lib/trafka does.
        stat = (trafka_image["rootfs"] / "var/lib/trafka").stat()
        os.chown(volume, stat.st_uid, stat.st_gid)
        port = started[-1].env["TRAFKA_PORT"] if started else str(free_port())
        container = ChrootContainer(trafka_image["rootfs"], trafka_image["config"], volume,
                                    {"TRAFKA_HOST": "127.0.0.1", "TRAFKA_PORT": port, **(env or {})})
        started.append(container)
        return container.start()

    yield run
    for container in started:
        container.stop()


def docker_problem() -> str | None:
    """Why testcontainers cannot run containers here, or None if a Docker daemon answers."""
    try:
        import docker
    except ImportError:
        return "the docker package (installed with testcontainers) is missing"
    try:
        client = docker.from_env(timeout=5)
        client.ping()
        client.close()
    except Exception as exc:  # noqa: BLE001 - any failure means "no daemon"
        host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        return f"no Docker daemon answers at {host} ({type(exc).__name__}); testcontainers needs one"
    return None


@pytest.fixture(scope="session")
def docker_image_for_testcontainers():
    """The trafka image built by the Docker daemon, for TrafkaContainer; skips without a daemon."""
    problem = docker_problem()
    if problem:
        pytest.skip(problem)
    import docker

    client = docker.from_env()
    tag = "trafka:testcontainers-test"
    client.images.build(path=str(REPO), tag=tag, rm=True)
    yield tag
    client.images.remove(tag, force=True)
    client.close()
