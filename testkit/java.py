"""Drive the real Java kafka-clients from pytest through py4j.

One JVM per kafka-clients version (3.9.1 or 4.3.0), started with py4j's ``launch_gateway``. py4j
and the runtime dependencies of kafka-clients (slf4j-api, lz4-java, snappy-java, zstd-jni, and
log4j for logging) come from the ``pyspark`` wheel of the ``[test]`` extras; the kafka-clients jars
come from ``python -m testkit.setup_deps`` (``.cache/jars/``). See docs/testing-clients.md.

    kafka = JavaKafka("3.9.1")
    producer = kafka.make_producer({"bootstrap.servers": "127.0.0.1:9092"})
    md = producer.send("t", key=b"k", value=b"v", headers=[("h", b"1")])   # RecordMetadata
    consumer = kafka.make_consumer({"bootstrap.servers": "127.0.0.1:9092"})
    consumer.assign([("t", 0)]); consumer.seekToBeginning()
    records = consumer.poll(1000)                                          # list[Record]
    kafka.shutdown()

Keys, values and header values are Python ``bytes`` (a ``str`` is UTF-8 encoded on the way in) and
come back as ``bytes`` or ``None``; the clients use ByteArraySerializer/ByteArrayDeserializer unless
the props say otherwise. Java exceptions (unwrapped from ExecutionException) are raised as
:class:`KafkaJavaError`, whose ``java_class``/``simple_name`` tell which Kafka error it was.
JVM logging (log4j2, level ``$TRAFKA_JAVA_LOG_LEVEL``, default WARN) goes to
``.cache/logs/java-kafka-clients-<version>.log``, not to the test output.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any, Iterable, NamedTuple, Sequence

from testkit.setup_deps import CACHE, JAR_SOURCES, SERIALIZER_DIR, SERIALIZER_JARS, kafka_clients_jar

# Runtime dependencies of kafka-clients, found in pyspark/jars (name prefixes).
RUNTIME_JAR_PREFIXES = ("slf4j-api-", "lz4-java-", "snappy-java-", "zstd-jni-")
# SASL/OAUTHBEARER in kafka-clients (its unsecured JWT login and validation) parses JSON with
# jackson-databind, a dependency Kafka leaves to the application; also from pyspark/jars.
OAUTHBEARER_JAR_PREFIXES = ("jackson-databind-", "jackson-core-", "jackson-annotations-")
# Confluent's schema-registry client and Avro serializer (setup_deps extracts them) need Avro,
# Guava and commons-compress, also from pyspark/jars; with kafka-clients 4.3.0 only.
SERIALIZER_DEP_PREFIXES = ("avro-", "guava-", "failureaccess-", "commons-compress-")
# slf4j -> log4j2 so the JVM's log level is ours to set.
LOGGING_JAR_PREFIXES = ("log4j-api-", "log4j-core-", "log4j-slf4j2-impl-")

LOGS = CACHE / "logs"

_LOG4J2 = """\
status = error
appender.err.type = Console
appender.err.name = STDERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %d{{HH:mm:ss.SSS}} %-5p [%t] %c{{1}}: %m%n
rootLogger.level = {level}
rootLogger.appenderRef.err.ref = STDERR
"""


class JavaUnavailable(RuntimeError):
    """The Java harness cannot run here; the message says why (the fixtures skip with it)."""


class KafkaJavaError(Exception):
    """A Java exception thrown by kafka-clients (ExecutionException/KafkaException unwrapped)."""

    def __init__(self, java_class: str, message: str | None, java_exception: Any = None):
        self.java_class = java_class
        self.message = message
        self.java_exception = java_exception
        super().__init__(f"{java_class}: {message}")

    @property
    def simple_name(self) -> str:
        return self.java_class.rsplit(".", 1)[-1]


class RecordMetadata(NamedTuple):
    topic: str
    partition: int
    offset: int
    timestamp: int


class Record(NamedTuple):
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    timestamp: int
    timestamp_type: str = "CreateTime"  # or "LogAppendTime" (Kafka's TimestampType names)


class OffsetInfo(NamedTuple):
    offset: int
    timestamp: int


TopicPartitionT = tuple[str, int]


# --------------------------------------------------------------------------------------------------
# JVM discovery


def pyspark_jars_dir() -> Path:
    try:
        import pyspark
    except ImportError as exc:
        raise JavaUnavailable("pyspark is not installed (pip install -e '.[test]')") from exc
    d = Path(pyspark.__file__).resolve().parent / "jars"
    if not d.is_dir():
        raise JavaUnavailable(f"pyspark has no jars directory at {d}")
    return d


def _pick(jars_dir: Path, prefix: str) -> Path:
    found = sorted(p for p in jars_dir.glob(prefix + "*.jar") if p.name[len(prefix):][:1].isdigit())
    if not found:
        raise JavaUnavailable(f"no {prefix}*.jar in {jars_dir}")
    return found[-1]


def classpath_for(version: str, *, logging: bool = True) -> list[Path]:
    """kafka-clients jar of `version` + its runtime deps (+ log4j2) from pyspark/jars."""
    if version not in JAR_SOURCES:
        raise ValueError(f"unknown kafka-clients version {version!r}; known: {sorted(JAR_SOURCES)}")
    jar = kafka_clients_jar(version)
    if not jar.exists():
        raise JavaUnavailable(f"{jar} is missing: run `python -m testkit.setup_deps` (make test-deps)")
    jars_dir = pyspark_jars_dir()
    prefixes = RUNTIME_JAR_PREFIXES + OAUTHBEARER_JAR_PREFIXES + (LOGGING_JAR_PREFIXES if logging else ())
    serializers = [SERIALIZER_DIR / name for name in SERIALIZER_JARS]
    if version == "4.3.0" and all(p.exists() for p in serializers):
        return [jar] + [_pick(jars_dir, p) for p in prefixes + SERIALIZER_DEP_PREFIXES] + serializers
    return [jar] + [_pick(jars_dir, p) for p in prefixes]


def check_java() -> str:
    java = shutil.which("java")
    if java is None:
        raise JavaUnavailable("no `java` on PATH (Java 17 needed: apt-get install -y openjdk-17-jre-headless)")
    return java


def _props(gateway, props: dict[str, Any]):
    jprops = gateway.jvm.java.util.Properties()
    for k, v in props.items():
        if v is None:
            continue
        if isinstance(v, bool):
            v = "true" if v else "false"
        elif isinstance(v, (list, tuple)):
            v = ",".join(str(x) for x in v)
        jprops.setProperty(str(k), str(v))
    return jprops


def _bytes(x: bytes | bytearray | str | None) -> bytes | None:
    if x is None:
        return None
    if isinstance(x, str):
        return x.encode()
    return bytes(x)


# --------------------------------------------------------------------------------------------------
# The JVM


class JavaKafka:
    """One JVM running kafka-clients `version`, reached through a py4j gateway."""

    def __init__(self, version: str, *, log_level: str | None = None, heap: str = "512m"):
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

        java = check_java()
        self.version = version
        cp = classpath_for(version)
        LOGS.mkdir(parents=True, exist_ok=True)
        level = (log_level or os.environ.get("TRAFKA_JAVA_LOG_LEVEL") or "WARN").upper()
        log4j = LOGS / f"log4j2-{level}.properties"
        log4j.write_text(_LOG4J2.format(level=level))
        self.log_path = LOGS / f"java-kafka-clients-{version}.log"
        self._log = open(self.log_path, "w")
        javaopts = [
            f"-Xmx{heap}",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",  # quick start, these are short-lived test JVMs
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={log4j}",
            "-Dlog4j2.shutdownHookEnabled=false",
        ]
        self._clients: list[_Client] = []
        try:
            port, token, self._proc = launch_gateway(
                classpath=os.pathsep.join(str(p) for p in cp),
                javaopts=javaopts,
                die_on_exit=True,  # the JVM exits when this Python process goes away
                redirect_stderr=self._log,
                enable_auth=True,
                java_path=java,
                return_proc=True,
            )
        except Exception as exc:
            self._log.close()
            raise JavaUnavailable(f"could not start the JVM for kafka-clients {version}: {exc} "
                                  f"(see {self.log_path})") from exc
        self.gateway = JavaGateway(gateway_parameters=GatewayParameters(
            port=port, auth_token=token, auto_convert=True, auto_close=True))
        self.jvm = self.gateway.jvm
        got = self.jvm.org.apache.kafka.common.utils.AppInfoParser.getVersion()
        if got != version:
            self.shutdown()
            raise JavaUnavailable(f"JVM loaded kafka-clients {got}, expected {version}")

    # -- helpers used by the wrappers --------------------------------------------------------------

    def call(self, fn, *args):
        """Run fn(*args), turning a Py4JJavaError into KafkaJavaError (cause of ExecutionException)."""
        from py4j.protocol import Py4JJavaError

        try:
            return fn(*args)
        except Py4JJavaError as exc:
            raise self._convert(exc) from None

    def _convert(self, exc) -> KafkaJavaError:
        jexc = exc.java_exception
        wrappers = {"java.util.concurrent.ExecutionException", "java.util.concurrent.CompletionException",
                    "org.apache.kafka.common.KafkaException"}
        while True:
            name = jexc.getClass().getName()
            cause = jexc.getCause()
            if name in wrappers and cause is not None:
                jexc = cause
                continue
            return KafkaJavaError(name, jexc.getMessage(), jexc)

    def duration(self, ms: int):
        return self.jvm.java.time.Duration.ofMillis(int(ms))

    def tp(self, topic: str, partition: int):
        return self.jvm.org.apache.kafka.common.TopicPartition(topic, int(partition))

    def tp_list(self, partitions: Iterable[TopicPartitionT]):
        lst = self.jvm.java.util.ArrayList()
        for t, p in partitions:
            lst.add(self.tp(t, p))
        return lst

    # -- clients -----------------------------------------------------------------------------------

    def make_producer(self, props: dict[str, Any] | None = None, **more: Any) -> "JavaProducer":
        """A KafkaProducer<byte[], byte[]>. props are Kafka's config names; kwargs too (dots as _)."""
        cfg = {
            "key.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
            "value.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
            **(props or {}), **{k.replace("_", "."): v for k, v in more.items()},
        }
        j = self.call(self.jvm.org.apache.kafka.clients.producer.KafkaProducer, _props(self.gateway, cfg))
        return self._track(JavaProducer(self, j))

    def make_consumer(self, props: dict[str, Any] | None = None, **more: Any) -> "JavaConsumer":
        """A KafkaConsumer<byte[], byte[]>. Defaults: auto.offset.reset=earliest."""
        cfg = {
            "key.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
            "value.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
            "auto.offset.reset": "earliest",
            **(props or {}), **{k.replace("_", "."): v for k, v in more.items()},
        }
        j = self.call(self.jvm.org.apache.kafka.clients.consumer.KafkaConsumer, _props(self.gateway, cfg))
        return self._track(JavaConsumer(self, j))

    def make_admin(self, props: dict[str, Any] | None = None, **more: Any) -> "JavaAdmin":
        cfg = {**(props or {}), **{k.replace("_", "."): v for k, v in more.items()}}
        j = self.call(self.jvm.org.apache.kafka.clients.admin.Admin.create, _props(self.gateway, cfg))
        return self._track(JavaAdmin(self, j))

    def _track(self, client):
        self._clients.append(client)
        return client

    def close_clients(self) -> None:
        """Close every client made through this JVM that is still open."""
        while self._clients:
            c = self._clients.pop()
            try:
                c.close(timeout_ms=2000)
            except Exception:
                pass

    def shutdown(self) -> None:
        """Close the clients, the gateway and the JVM process. Safe to call twice."""
        proc = getattr(self, "_proc", None)
        if proc is None:
            return
        try:
            self.close_clients()
        except Exception:
            pass
        try:
            self.gateway.shutdown()
        except Exception:
            pass
        try:
            proc.stdin.close()  # --die-on-broken-pipe
        except Exception:
            pass
        try:
            proc.wait(timeout=5)
        except Exception:
            proc.kill()
            proc.wait(timeout=5)
        self._proc = None
        self._log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()


def running_jvm(version: str):
    """A generator for pytest fixtures: yields a JavaKafka of `version`, shut down afterwards,
    or skips the test when Java cannot run here (`yield from running_jvm("4.3.0")`)."""
    import pytest

    try:
        kafka = JavaKafka(version)
    except JavaUnavailable as exc:
        pytest.skip(f"Java kafka-clients {version} unavailable: {exc}")
    try:
        yield kafka
    finally:
        kafka.shutdown()


class _Client:
    def __init__(self, kafka: JavaKafka, j):
        self.kafka = kafka
        self.j = j
        self.closed = False

    def close(self, timeout_ms: int = 5000) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.kafka._clients.remove(self)
        except ValueError:
            pass
        self.kafka.call(self.j.close, self.kafka.duration(timeout_ms))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --------------------------------------------------------------------------------------------------
# Producer


class SendFuture:
    def __init__(self, producer: "JavaProducer", jfuture):
        self._p = producer
        self.j = jfuture

    def get(self, timeout_s: float = 30) -> RecordMetadata:
        k = self._p.kafka
        unit = k.jvm.java.util.concurrent.TimeUnit.MILLISECONDS
        md = k.call(self.j.get, int(timeout_s * 1000), unit)
        return RecordMetadata(md.topic(), md.partition(), md.offset(), md.timestamp())


class JavaProducer(_Client):
    def _record(self, topic, key, value, headers, partition, timestamp):
        jvm = self.kafka.jvm
        hdrs = jvm.java.util.ArrayList()
        items = headers.items() if isinstance(headers, dict) else (headers or [])
        for hk, hv in items:
            hdrs.add(jvm.org.apache.kafka.common.header.internals.RecordHeader(hk, _bytes(hv)))
        p = None if partition is None else jvm.java.lang.Integer.valueOf(int(partition))
        ts = None if timestamp is None else jvm.java.lang.Long.valueOf(int(timestamp))
        return jvm.org.apache.kafka.clients.producer.ProducerRecord(
            topic, p, ts, _bytes(key), _bytes(value), hdrs)

    def send_async(self, topic: str, key=None, value=None, headers=None, partition: int | None = None,
                   timestamp: int | None = None) -> SendFuture:
        rec = self._record(topic, key, value, headers, partition, timestamp)
        return SendFuture(self, self.kafka.call(self.j.send, rec))

    def send(self, topic: str, key=None, value=None, headers=None, partition: int | None = None,
             timestamp: int | None = None, timeout_s: float = 30) -> RecordMetadata:
        """Send one record and wait for its ack. headers: [(str, bytes)] or {str: bytes}."""
        return self.send_async(topic, key, value, headers, partition, timestamp).get(timeout_s)

    def flush(self) -> None:
        self.kafka.call(self.j.flush)

    def partitionsFor(self, topic: str) -> list[int]:
        return sorted(pi.partition() for pi in self.kafka.call(self.j.partitionsFor, topic))

    partitions_for = partitionsFor


# --------------------------------------------------------------------------------------------------
# Consumer


class JavaConsumer(_Client):
    def assign(self, partitions: Iterable[TopicPartitionT]) -> None:
        self.kafka.call(self.j.assign, self.kafka.tp_list(partitions))

    def assignment(self) -> list[TopicPartitionT]:
        return sorted((tp.topic(), tp.partition()) for tp in self.kafka.call(self.j.assignment))

    def subscribe(self, topics: Sequence[str]) -> None:
        lst = self.kafka.jvm.java.util.ArrayList()
        for t in topics:
            lst.add(t)
        self.kafka.call(self.j.subscribe, lst)

    def unsubscribe(self) -> None:
        self.kafka.call(self.j.unsubscribe)

    def seek(self, topic: str, partition: int, offset: int) -> None:
        self.kafka.call(self.j.seek, self.kafka.tp(topic, partition), int(offset))

    def seekToBeginning(self, partitions: Iterable[TopicPartitionT] | None = None) -> None:
        """Seek the given partitions (default: all assigned) to their beginning (lazily, on poll)."""
        arg = self.j.assignment() if partitions is None else self.kafka.tp_list(partitions)
        self.kafka.call(self.j.seekToBeginning, arg)

    def seekToEnd(self, partitions: Iterable[TopicPartitionT] | None = None) -> None:
        arg = self.j.assignment() if partitions is None else self.kafka.tp_list(partitions)
        self.kafka.call(self.j.seekToEnd, arg)

    def position(self, topic: str, partition: int) -> int:
        return self.kafka.call(self.j.position, self.kafka.tp(topic, partition))

    def poll(self, timeout_ms: int = 1000) -> list[Record]:
        """One KafkaConsumer.poll; records as Record(topic, partition, offset, key, value, headers, timestamp)."""
        recs = self.kafka.call(self.j.poll, self.kafka.duration(timeout_ms))
        out = []
        it = recs.iterator()
        while it.hasNext():
            r = it.next()
            headers = [(h.key(), h.value()) for h in r.headers().toArray()]
            out.append(Record(r.topic(), r.partition(), r.offset(), _opt_bytes(r.key()),
                              _opt_bytes(r.value()), headers, r.timestamp(), r.timestampType().toString()))
        return out

    def poll_until(self, count: int, timeout_s: float = 30, poll_ms: int = 200) -> list[Record]:
        """Poll until at least `count` records arrived or `timeout_s` passed; returns what arrived."""
        out: list[Record] = []
        deadline = time.monotonic() + timeout_s
        while len(out) < count and time.monotonic() < deadline:
            out.extend(self.poll(poll_ms))
        return out

    def commitSync(self, offsets: dict[TopicPartitionT, int] | None = None) -> None:
        """Commit the consumed positions, or the given {(topic, partition): next offset to read}."""
        if offsets is None:
            self.kafka.call(self.j.commitSync)
            return
        jvm = self.kafka.jvm
        m = jvm.java.util.HashMap()
        for (t, p), off in offsets.items():
            m.put(self.kafka.tp(t, p), jvm.org.apache.kafka.clients.consumer.OffsetAndMetadata(int(off)))
        self.kafka.call(self.j.commitSync, m)

    def committed(self, partitions: Iterable[TopicPartitionT]) -> dict[TopicPartitionT, int | None]:
        jset = self.kafka.jvm.java.util.HashSet(self.kafka.tp_list(partitions))
        res = self.kafka.call(self.j.committed, jset)
        return {(tp.topic(), tp.partition()): (None if om is None else om.offset()) for tp, om in res.items()}

    def listTopics(self) -> dict[str, list[int]]:
        res = self.kafka.call(self.j.listTopics)
        return {t: sorted(pi.partition() for pi in infos) for t, infos in res.items()}

    seek_to_beginning = seekToBeginning
    seek_to_end = seekToEnd
    commit_sync = commitSync


def _jiter(coll):
    """Iterate any java.lang.Iterable (py4j only makes List/Set/Map iterable by itself)."""
    it = coll.iterator()
    while it.hasNext():
        yield it.next()


def _opt_bytes(x) -> bytes | None:
    return None if x is None else bytes(x)


# --------------------------------------------------------------------------------------------------
# Admin


class JavaAdmin(_Client):
    def _get(self, kafka_future, timeout_s: float = 30):
        unit = self.kafka.jvm.java.util.concurrent.TimeUnit.MILLISECONDS
        return self.kafka.call(kafka_future.get, int(timeout_s * 1000), unit)

    def createTopics(self, name: str | Sequence[str], partitions: int = 1,
                     configs: dict[str, str] | None = None, replication_factor: int = 1,
                     timeout_s: float = 30) -> None:
        """Create one topic (or several with the same settings). Raises KafkaJavaError
        (simple_name e.g. TopicExistsException, InvalidPartitionsException)."""
        jvm = self.kafka.jvm
        names = [name] if isinstance(name, str) else list(name)
        lst = jvm.java.util.ArrayList()
        for n in names:
            # NewTopic(String, int, short): py4j narrows a Python int to the short parameter.
            # (Boxed values never stay boxed: Short.valueOf(..) comes back as a Python int.)
            nt = jvm.org.apache.kafka.clients.admin.NewTopic(n, int(partitions), int(replication_factor))
            if configs:
                m = jvm.java.util.HashMap()
                for k, v in configs.items():
                    m.put(str(k), str(v))
                nt.configs(m)
            lst.add(nt)
        self._get(self.kafka.call(self.j.createTopics, lst).all(), timeout_s)

    def deleteTopics(self, names: str | Sequence[str], timeout_s: float = 30) -> None:
        names = [names] if isinstance(names, str) else list(names)
        lst = self.kafka.jvm.java.util.ArrayList()
        for n in names:
            lst.add(n)
        self._get(self.kafka.call(self.j.deleteTopics, lst).all(), timeout_s)

    def listTopics(self, internal: bool = False, timeout_s: float = 30) -> list[str]:
        opts = self.kafka.jvm.org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(internal)
        return sorted(self._get(self.kafka.call(self.j.listTopics, opts).names(), timeout_s))

    def describeTopics(self, names: str | Sequence[str], timeout_s: float = 30) -> dict[str, dict]:
        """{topic: {"name", "internal", "topic_id", "partitions": [{"partition", "leader", "replicas", "isr"}]}}"""
        names = [names] if isinstance(names, str) else list(names)
        lst = self.kafka.jvm.java.util.ArrayList()
        for n in names:
            lst.add(n)
        res = self._get(self.kafka.call(self.j.describeTopics, lst).allTopicNames(), timeout_s)
        out = {}
        for name, d in res.items():
            parts = []
            for pi in d.partitions():
                leader = pi.leader()
                parts.append({
                    "partition": pi.partition(),
                    "leader": None if leader is None else leader.id(),
                    "replicas": [n.id() for n in pi.replicas()],
                    "isr": [n.id() for n in pi.isr()],
                })
            tid = d.topicId()
            out[name] = {"name": d.name(), "internal": d.isInternal(),
                         "topic_id": None if tid is None else tid.toString(),
                         "partitions": sorted(parts, key=lambda p: p["partition"])}
        return out

    def _config_resource(self, name: str, resource_type: str):
        jvm = self.kafka.jvm
        cr = jvm.org.apache.kafka.common.config.ConfigResource
        rtype = getattr(cr, "Type").valueOf(resource_type.upper())
        return cr(rtype, name)

    def describeConfigs(self, name: str, resource_type: str = "topic", timeout_s: float = 30) -> dict[str, str | None]:
        """{config name: value} of a topic (or of a broker: resource_type="broker", name="0")."""
        res = self._config_resource(name, resource_type)
        lst = self.kafka.jvm.java.util.ArrayList()
        lst.add(res)
        cfgs = self._get(self.kafka.call(self.j.describeConfigs, lst).all(), timeout_s)
        cfg = cfgs.get(res)
        return {e.name(): e.value() for e in _jiter(cfg.entries())}

    def incrementalAlterConfigs(self, name: str, changes: dict[str, str | None], resource_type: str = "topic",
                                timeout_s: float = 30) -> None:
        """Set each config to its value; a None value deletes it (reverts to the default)."""
        jvm = self.kafka.jvm
        admin = jvm.org.apache.kafka.clients.admin
        optype = getattr(admin.AlterConfigOp, "OpType")
        ops = jvm.java.util.ArrayList()
        for k, v in changes.items():
            op = optype.valueOf("DELETE" if v is None else "SET")
            ops.add(admin.AlterConfigOp(admin.ConfigEntry(k, None if v is None else str(v)), op))
        m = jvm.java.util.HashMap()
        m.put(self._config_resource(name, resource_type), ops)
        self._get(self.kafka.call(self.j.incrementalAlterConfigs, m).all(), timeout_s)

    def listOffsets(self, partitions: Iterable[TopicPartitionT], spec: str | int = "latest",
                    timeout_s: float = 30) -> dict[TopicPartitionT, OffsetInfo]:
        """{(topic, partition): OffsetInfo(offset, timestamp)}. spec: "earliest", "latest",
        "max_timestamp", or an int timestamp (ms) for OffsetSpec.forTimestamp."""
        jvm = self.kafka.jvm
        spec_cls = jvm.org.apache.kafka.clients.admin.OffsetSpec
        if isinstance(spec, int) and not isinstance(spec, bool):
            jspec = spec_cls.forTimestamp(spec)
        elif spec == "earliest":
            jspec = spec_cls.earliest()
        elif spec == "latest":
            jspec = spec_cls.latest()
        elif spec == "max_timestamp":
            jspec = spec_cls.maxTimestamp()
        else:
            raise ValueError(f"bad offset spec {spec!r}")
        m = jvm.java.util.HashMap()
        for t, p in partitions:
            m.put(self.kafka.tp(t, p), jspec)
        res = self._get(self.kafka.call(self.j.listOffsets, m).all(), timeout_s)
        return {(tp.topic(), tp.partition()): OffsetInfo(info.offset(), info.timestamp())
                for tp, info in res.items()}

    def createPartitions(self, topic: str, total: int, timeout_s: float = 30) -> None:
        admin = self.kafka.jvm.org.apache.kafka.clients.admin
        m = self.kafka.jvm.java.util.HashMap()
        m.put(topic, admin.NewPartitions.increaseTo(int(total)))
        self._get(self.kafka.call(self.j.createPartitions, m).all(), timeout_s)

    def deleteRecords(self, before: dict[TopicPartitionT, int], timeout_s: float = 30) -> None:
        """Delete records below the given offset of each partition."""
        jvm = self.kafka.jvm
        m = jvm.java.util.HashMap()
        # RecordsToDelete has both a static beforeOffset(long) and an instance beforeOffset(), which
        # hides the static one from py4j: call it through reflection.
        sig = self.kafka.gateway.new_array(jvm.java.lang.Class, 1)
        sig[0] = jvm.java.lang.Long.TYPE  # long.class
        method = jvm.java.lang.Class.forName("org.apache.kafka.clients.admin.RecordsToDelete").getMethod(
            "beforeOffset", sig)
        for (t, p), off in before.items():
            args = self.kafka.gateway.new_array(jvm.java.lang.Object, 1)
            args[0] = int(off)  # Method.invoke unboxes and widens an Integer to long
            m.put(self.kafka.tp(t, p), method.invoke(None, args))
        self._get(self.kafka.call(self.j.deleteRecords, m).all(), timeout_s)

    def listConsumerGroupOffsets(self, group: str, timeout_s: float = 30) -> dict[TopicPartitionT, int]:
        res = self._get(self.kafka.call(self.j.listConsumerGroupOffsets, group).partitionsToOffsetAndMetadata(),
                        timeout_s)
        return {(tp.topic(), tp.partition()): om.offset() for tp, om in res.items() if om is not None}

    def describeConsumerGroups(self, groups: Sequence[str], timeout_s: float = 30) -> dict[str, dict]:
        """Admin.describeConsumerGroups (ConsumerGroupDescribe, DescribeGroups for classic
        groups): per group its type, state, assignor, epochs and members, each member with
        its assignment and (consumer protocol) target assignment and member epoch."""
        lst = self.kafka.jvm.java.util.ArrayList()
        for g in groups:
            lst.add(g)
        described = self._get(self.kafka.call(self.j.describeConsumerGroups, lst).all(), timeout_s)

        def partitions(assignment) -> set[TopicPartitionT]:
            return {(tp.topic(), tp.partition()) for tp in _jiter(assignment.topicPartitions())}

        def optional(value):
            return value.get() if value.isPresent() else None

        out = {}
        for group_id, d in described.items():
            members = []
            for m in _jiter(d.members()):
                target = optional(m.targetAssignment())
                members.append({
                    "member_id": m.consumerId(), "client_id": m.clientId(), "host": m.host(),
                    "assignment": partitions(m.assignment()),
                    "target_assignment": None if target is None else partitions(target),
                    "member_epoch": optional(m.memberEpoch()),
                })
            out[group_id] = {
                "type": d.type().toString(), "state": d.groupState().toString(), "assignor": d.partitionAssignor(),
                "group_epoch": optional(d.groupEpoch()), "assignment_epoch": optional(d.targetAssignmentEpoch()),
                "members": members,
            }
        return out

    def listGroups(self, timeout_s: float = 30) -> dict[str, dict]:
        """Admin.listGroups (ListGroups v5): group id -> its type, protocol and state."""
        listed = self._get(self.kafka.call(self.j.listGroups).all(), timeout_s)
        return {
            g.groupId(): {
                "type": g.type().get().toString() if g.type().isPresent() else None,
                "protocol": g.protocol(),
                "state": g.groupState().get().toString() if g.groupState().isPresent() else None,
            }
            for g in _jiter(listed)
        }

    create_topics = createTopics
    delete_topics = deleteTopics
    list_topics = listTopics
    describe_topics = describeTopics
    describe_configs = describeConfigs
    incremental_alter_configs = incrementalAlterConfigs
    list_offsets = listOffsets
    create_partitions = createPartitions
    delete_records = deleteRecords
    list_consumer_group_offsets = listConsumerGroupOffsets


# --------------------------------------------------------------------------------------------------
# Smoke check: python -m testkit.java BOOTSTRAP [VERSION ...]


def smoke(bootstrap: str, version: str) -> None:
    """Round-trip through a running broker: create topic, produce, consume, list offsets, delete."""
    topic = f"java-smoke-{version.replace('.', '')}-{time.time_ns()}"
    with JavaKafka(version) as k:
        admin = k.make_admin({"bootstrap.servers": bootstrap})
        admin.createTopics(topic, partitions=2, configs={"retention.ms": "3600000"})
        assert admin.describeConfigs(topic).get("retention.ms") == "3600000"
        prod = k.make_producer({"bootstrap.servers": bootstrap, "compression.type": "zstd"})
        sent = [prod.send(topic, key=f"k{i}", value=bytes([i, 0, 255]), headers=[("h", b"\x00")], partition=1)
                for i in range(3)]
        assert [m.offset for m in sent] == [0, 1, 2], sent
        cons = k.make_consumer({"bootstrap.servers": bootstrap})
        cons.assign([(topic, 1)])
        cons.seekToBeginning()
        got = cons.poll_until(3, timeout_s=20)
        assert [(r.offset, r.key, r.value, r.headers) for r in got] == [
            (i, f"k{i}".encode(), bytes([i, 0, 255]), [("h", b"\x00")]) for i in range(3)], got
        latest = admin.listOffsets([(topic, 0), (topic, 1)], "latest")
        assert {tp: o.offset for tp, o in latest.items()} == {(topic, 0): 0, (topic, 1): 3}, latest
        admin.deleteTopics(topic)
    print(f"kafka-clients {version} against {bootstrap}: ok")


if __name__ == "__main__":
    import sys

    if len(sys.argv) < 2:
        sys.exit("usage: python -m testkit.java BOOTSTRAP [VERSION ...]  (versions: "
                 + ", ".join(JAR_SOURCES) + ")")
    for v in sys.argv[2:] or list(JAR_SOURCES):
        smoke(sys.argv[1], v)


# --------------------------------------------------------------------------------------------------
# Share groups (KIP-932), through the raw py4j objects


def java_list(jvm, *items):
    values = jvm.java.util.ArrayList()
    for item in items:
        values.add(item)
    return values


def share_reset_earliest(k: JavaKafka, admin, group: str) -> None:
    """share.auto.offset.reset=earliest for the share group, by IncrementalAlterConfigs."""
    jvm, call = k.jvm, k.call
    entry = jvm.org.apache.kafka.clients.admin.AlterConfigOp(
        jvm.org.apache.kafka.clients.admin.ConfigEntry("share.auto.offset.reset", "earliest"),
        jvm.org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)
    resource = jvm.org.apache.kafka.common.config.ConfigResource(
        jvm.org.apache.kafka.common.config.ConfigResource.Type.GROUP, group)
    changes = jvm.java.util.HashMap()
    changes.put(resource, java_list(jvm, entry))
    call(call(call(admin.j.incrementalAlterConfigs, changes).all).get)


def share_consumer(k: JavaKafka, bootstrap: str, group: str, topic: str, *, explicit: bool = False):
    """A KafkaShareConsumer (4.x) of byte arrays in `group`, subscribed to `topic`."""
    jvm, call = k.jvm, k.call
    props = jvm.java.util.Properties()
    settings = {"bootstrap.servers": bootstrap, "group.id": group,
                "key.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
                "value.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer"}
    if explicit:
        settings["share.acknowledgement.mode"] = "explicit"
    for key, value in settings.items():
        props.setProperty(key, value)
    consumer = call(jvm.org.apache.kafka.clients.consumer.KafkaShareConsumer, props)
    call(consumer.subscribe, java_list(jvm, topic))
    return consumer
