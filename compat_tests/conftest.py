"""Fixtures for driving real Kafka clients. See docs/testing-clients.md.

* ``java_client_39`` / ``java_client_43``: a :class:`compat_tests.java.JavaKafka` for kafka-clients
  3.9.1 / 4.3.0. The JVM is started once per session (``java_jvm_39`` / ``java_jvm_43``) and shut down
  at session end; clients made during a test are closed when the test ends.
* ``kcat``: path of the kcat binary.
* ``spark_kafka_jars``: jars of $SPARK_KAFKA_JARS.

Each skips with one clear reason when what it needs is not there.
"""

from __future__ import annotations

import shutil

import pytest

from compat_tests.java import JavaKafka, JavaUnavailable
from compat_tests.setup_deps import SetupError, spark_kafka_jars as _spark_kafka_jars


def _session_jvm(version: str):
    try:
        kafka = JavaKafka(version)
    except JavaUnavailable as exc:
        pytest.skip(f"Java kafka-clients {version} unavailable: {exc}")
    try:
        yield kafka
    finally:
        kafka.shutdown()


@pytest.fixture(scope="session")
def java_jvm_39():
    """Session-wide JVM with kafka-clients 3.9.1 (clients made here live until you close them)."""
    yield from _session_jvm("3.9.1")


@pytest.fixture(scope="session")
def java_jvm_43():
    """Session-wide JVM with kafka-clients 4.3.0 (clients made here live until you close them)."""
    yield from _session_jvm("4.3.0")


@pytest.fixture
def java_client_39(java_jvm_39):
    """kafka-clients 3.9.1: make_producer/make_consumer/make_admin; closed at the end of the test."""
    yield java_jvm_39
    java_jvm_39.close_clients()


@pytest.fixture
def java_client_43(java_jvm_43):
    """kafka-clients 4.3.0: make_producer/make_consumer/make_admin; closed at the end of the test."""
    yield java_jvm_43
    java_jvm_43.close_clients()


@pytest.fixture(scope="session")
def kcat():
    path = shutil.which("kcat")
    if path is None:
        pytest.skip("kcat is not installed (`python -m compat_tests.setup_deps` installs it via apt-get when root)")
    return path


@pytest.fixture(scope="session")
def spark_kafka_jars():
    try:
        jars = _spark_kafka_jars()
    except SetupError as exc:
        pytest.skip(str(exc))
    if not jars:
        pytest.skip("Spark Kafka connector jars not available: set SPARK_KAFKA_JARS to a local directory "
                    "holding spark-sql-kafka-0-10, spark-token-provider-kafka-0-10, commons-pool2, kafka-clients")
    return jars
