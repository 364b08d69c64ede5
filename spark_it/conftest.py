"""Fixtures for spark_it: one broker and one SparkSession for the whole session.

* ``kafka_broker``: a trafka broker process on a free loopback port (retention checked every 200 ms).
* ``bootstrap``: its "host:port".
* ``spark``: a local[2] SparkSession with the Kafka connector; skips with one reason without it.
* ``java_client_39``: Java kafka-clients 3.9.1 (what Spark 4.0 uses), from compat_tests.

Every test makes its own topics (``topic_name``), so tests never see each other's data.
"""

from __future__ import annotations

import pytest

from compat_tests.conftest import java_client_39, java_jvm_39  # noqa: F401 - fixtures
from spark_it import harness
from testkit.setup_deps import ChecksumMismatch
from trafka.testing import TrafkaBroker

BROKER_CONFIG = {"log.retention.check.interval.ms": 200}


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory):
    broker = TrafkaBroker(data_dir=tmp_path_factory.mktemp("spark-it-broker") / "data", config=BROKER_CONFIG)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def bootstrap(kafka_broker) -> str:
    return kafka_broker.bootstrap_servers


@pytest.fixture(scope="session")
def spark(tmp_path_factory, kafka_broker):
    """Depends on the broker so that it stops first: its cached clients then close against a live broker."""
    pytest.importorskip("pyspark")
    try:
        conf = harness.connector_conf()
    except ChecksumMismatch as exc:  # a shared jar that is not the one SHA256SUMS names: an error
        pytest.fail(f"Spark Kafka connector jars: {exc}")
    except Exception as exc:  # SPARK_KAFKA_JARS set to something that is not a directory
        pytest.skip(f"{harness.NO_CONNECTOR} ({exc})")
    if conf is None:
        pytest.skip(harness.NO_CONNECTOR)
    try:
        from testkit.java import check_java

        check_java()
    except Exception as exc:
        pytest.skip(str(exc))
    session = harness.start_spark(conf, tmp_path_factory.mktemp("spark"))
    try:
        yield session
    finally:
        harness.stop_spark(session)


@pytest.fixture
def topic_name(request):
    """topic_name("src") -> a topic name unique to this test."""
    base = request.node.name.replace("[", "-").replace("]", "")[:60]
    return lambda suffix="t": harness.unique(f"{base}-{suffix}")
