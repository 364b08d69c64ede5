"""What the spark_it tests share: the connector jars, one SparkSession, kafka-python helpers.

The Spark Kafka connector (spark-sql-kafka-0-10 and friends) is not part of pyspark. It comes from
$SPARK_KAFKA_JARS (a local directory of jars, used as is), else from ../shared/spark-jars beside the
clone (checked against its SHA256SUMS; testkit.setup_deps.spark_kafka_jars) or, when
TRAFKA_SPARK_PACKAGES=1, from Maven through spark.jars.packages. Without any the Spark tests skip
with :data:`NO_CONNECTOR`.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from pathlib import Path

from testkit.setup_deps import CACHE, spark_kafka_jars
from trafka.wire.records import HEADER_SIZE, LOG_OVERHEAD, MIN_BATCH_LENGTH, parse_header

CONNECTOR_JAR_PREFIX = "spark-sql-kafka-0-10_"
NO_CONNECTOR = (
    "Spark Kafka connector not available: no ../shared/spark-jars beside the clone; set SPARK_KAFKA_JARS to a "
    "directory holding spark-sql-kafka-0-10_2.13, spark-token-provider-kafka-0-10_2.13, commons-pool2 and "
    "kafka-clients jars, or TRAFKA_SPARK_PACKAGES=1 to let Spark fetch them from Maven (docs/spark.md)"
)
QUERY_TIMEOUT_S = 90


def connector_conf() -> dict[str, str] | None:
    """Spark settings that put the Kafka connector on the classpath, or None when there is none."""
    jars = spark_kafka_jars()
    if jars:
        if not any(j.name.startswith(CONNECTOR_JAR_PREFIX) for j in jars):
            return None
        return {"spark.jars": ",".join(str(j) for j in jars)}
    if os.environ.get("TRAFKA_SPARK_PACKAGES") == "1":
        import pyspark

        return {
            "spark.jars.packages": f"org.apache.spark:spark-sql-kafka-0-10_2.13:{pyspark.__version__}",
            "spark.jars.ivy": str(CACHE / "ivy"),
        }
    return None


def start_spark(conf: dict[str, str], scratch: Path):
    """One local[2] SparkSession, small and quiet, every server on 127.0.0.1."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("trafka-spark-it")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.stopTimeout", "30s")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", str(scratch / "warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}")
    )
    for k, v in conf.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def stop_spark(spark) -> None:
    """Stop the session and the JVM behind it, so nothing outlives the tests."""
    from pyspark import SparkContext

    spark.stop()
    gateway = SparkContext._gateway
    if gateway is None:
        return
    proc = getattr(gateway, "proc", None)
    try:
        gateway.shutdown()
    finally:
        SparkContext._gateway = None
        SparkContext._jvm = None
        if proc is not None:
            try:
                proc.stdin.close()  # pyspark's JVM exits when its stdin closes
                proc.wait(timeout=15)
            except Exception:
                proc.kill()
                proc.wait(timeout=15)


# -- queries ---------------------------------------------------------------------------------------


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def run_available_now(writer, timeout_s: float = QUERY_TIMEOUT_S):
    """Start a DataStreamWriter with the availableNow trigger and wait until it has read everything."""
    query = writer.trigger(availableNow=True).start()
    if not query.awaitTermination(timeout_s):
        query.stop()
        raise TimeoutError(f"query {query.name or query.id} did not finish in {timeout_s}s")
    return query


def process_all_available(query, timeout_s: float = QUERY_TIMEOUT_S) -> None:
    """query.processAllAvailable(), bounded: on timeout the query is stopped and TimeoutError raised."""
    errors: list[BaseException] = []

    def run():
        try:
            query.processAllAvailable()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            errors.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout_s)
    if t.is_alive():
        query.stop()
        t.join(30)
        raise TimeoutError(f"query {query.name or query.id} did not catch up in {timeout_s}s")
    if errors:
        raise errors[0]


# -- kafka-python ----------------------------------------------------------------------------------


def produce(bootstrap: str, topic: str, records, **producer_config) -> list:
    """Send dicts (key, value, headers, partition, timestamp_ms) with kafka-python; their RecordMetadata."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, **producer_config)
    try:
        futures = [producer.send(topic, **r) for r in records]
        producer.flush(30)
        return [f.get(30) for f in futures]
    finally:
        producer.close(5)


def consume_all(bootstrap: str, topic: str, expected: int, timeout_s: float = 30) -> list:
    """Every record of `topic` from the beginning, with kafka-python, once `expected` have arrived."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None)
    try:
        parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])]
        consumer.assign(parts)
        consumer.seek_to_beginning()
        out: list = []
        deadline = time.monotonic() + timeout_s
        while len(out) < expected and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=200).values():
                out.extend(batch)
        return sorted(out, key=lambda r: (r.partition, r.offset))
    finally:
        consumer.close()


def delete_records(bootstrap: str, before: dict[tuple[str, int], int]) -> None:
    """DeleteRecords through kafka-python's admin: moves each partition's log start offset."""
    from kafka import KafkaAdminClient, TopicPartition

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.delete_records({TopicPartition(t, p): off for (t, p), off in before.items()}, timeout_ms=30000)
    finally:
        admin.close()


def create_topic(bootstrap: str, topic: str, partitions: int = 1, configs: dict | None = None) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1, topic_configs=configs or {})], timeout_ms=30000)
    finally:
        admin.close()


def alter_topic(bootstrap: str, topic: str, configs: dict[str, str]) -> None:
    """Set topic configs with kafka-python's admin (AlterConfigs)."""
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs=configs)])
    finally:
        admin.close()


def batch_headers(data_dir: Path, topic: str, partition: int) -> list:
    """The record-batch headers stored in one partition's log segments, oldest first."""
    headers = []
    for seg in sorted((Path(data_dir) / f"{topic}-{partition}").glob("*.log")):
        buf = seg.read_bytes()
        pos = 0
        while pos + HEADER_SIZE <= len(buf):
            h = parse_header(buf, pos)
            if h.batch_length < MIN_BATCH_LENGTH:
                break
            headers.append(h)
            pos += LOG_OVERHEAD + h.batch_length
    return headers
