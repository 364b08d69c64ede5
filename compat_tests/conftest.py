"""Fixtures for driving real Kafka clients. See docs/testing-clients.md.

* ``java_client_39`` / ``java_client_43``: a :class:`testkit.java.JavaKafka` for kafka-clients
  3.9.1 / 4.3.0. The JVM is started once per session (``java_jvm_39`` / ``java_jvm_43``) and shut down
  at session end; clients made during a test are closed when the test ends.
* ``kcat``: path of the kcat binary.
* ``node_kafkajs`` / ``node_platformatic``: the session's Node process driving KafkaJS /
  @platformatic/kafka (:class:`testkit.clients.node.NodeClient`), started on first use.
* ``spark_kafka_jars``: jars of $SPARK_KAFKA_JARS, else of ../shared/spark-jars (checked).
* ``bootstrap``: the session broker's address (``trafka_session_broker``, shared: use unique topics).
* ``client``: a :mod:`testkit.drivers` driver, parametrized over every client of the matrix.

Matrix markers (``compat``, ``compat_client``, ``compat_cross``) are explained in
:mod:`compat_tests.matrix`; every compat test gets a ``timeout`` of 90 s unless it sets its own.

Each skips with one clear reason when what it needs is not there.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from compat_tests import matrix
from testkit import drivers
from testkit.clients import node as node_clients
from testkit.java import running_jvm
from testkit.setup_deps import ChecksumMismatch, SetupError, spark_kafka_jars as _spark_kafka_jars

_HERE = Path(__file__).resolve().parent
DEFAULT_TIMEOUT_S = 90
_outcomes: dict[str, str] = {}


def pytest_configure(config):
    config.addinivalue_line("markers", "compat(*capabilities): matrix cells this test proves (compat_tests.matrix)")
    config.addinivalue_line("markers", "compat_client(name): the client of every compat test in the module")
    config.addinivalue_line("markers", "compat_cross: a writer x reader cell of the cross-client table")


def _is_compat(item) -> bool:
    return _HERE in Path(str(item.path)).resolve().parents


def pytest_collection_modifyitems(session, config, items):
    mine = [item for item in items if _is_compat(item)]
    for item in mine:
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(DEFAULT_TIMEOUT_S))
    cells_path = os.environ.get(matrix.CELLS_ENV)
    if cells_path:
        Path(cells_path).write_text(json.dumps(matrix.describe(mine)))


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        _outcomes[report.nodeid] = "xfailed" if hasattr(report, "wasxfail") else report.outcome


def pytest_sessionfinish(session):
    if not _outcomes or os.environ.get(matrix.CELLS_ENV):
        return
    matrix.RESULTS.parent.mkdir(parents=True, exist_ok=True)
    matrix.RESULTS.write_text(json.dumps({"finished": time.time(), "outcomes": _outcomes}, indent=1))


def pytest_terminal_summary(terminalreporter):
    failed = sorted(nodeid for nodeid, outcome in _outcomes.items() if outcome == "failed")
    if failed:
        terminalreporter.write_line("compat matrix: these failures contradict the ✅ cells they cover "
                                    "(docs/compatibility.md):", red=True)
        for nodeid in failed:
            terminalreporter.write_line(f"  {nodeid}")


@pytest.fixture(scope="session")
def java_jvm_39():
    """Session-wide JVM with kafka-clients 3.9.1 (clients made here live until you close them)."""
    yield from running_jvm("3.9.1")


@pytest.fixture(scope="session")
def java_jvm_43():
    """Session-wide JVM with kafka-clients 4.3.0 (clients made here live until you close them)."""
    yield from running_jvm("4.3.0")


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
        pytest.skip("kcat is not installed (`python -m testkit.setup_deps` installs it via apt-get when root)")
    return path


def _node_client(module: str):
    reason = node_clients.missing(module)
    if reason:
        pytest.skip(reason)
    client = node_clients.NodeClient(module)
    yield client
    client.close()


@pytest.fixture(scope="session")
def node_kafkajs():
    """One Node process driving KafkaJS for the whole session (testkit/node/kafkajs.mjs)."""
    yield from _node_client("kafkajs")


@pytest.fixture(scope="session")
def node_platformatic():
    """One Node process driving @platformatic/kafka for the whole session (testkit/node/platformatic.mjs)."""
    yield from _node_client("platformatic")


NODE_FIXTURES = {"kafkajs": "node_kafkajs", "platformatic-kafka": "node_platformatic"}


@pytest.fixture(scope="session")
def spark_kafka_jars():
    try:
        jars = _spark_kafka_jars()
    except ChecksumMismatch as exc:  # a shared jar that is not the one SHA256SUMS names: an error
        pytest.fail(f"Spark Kafka connector jars: {exc}")
    except SetupError as exc:
        pytest.skip(str(exc))
    if not jars:
        pytest.skip("Spark Kafka connector jars not available: set SPARK_KAFKA_JARS to a local directory "
                    "holding spark-sql-kafka-0-10, spark-token-provider-kafka-0-10, commons-pool2, kafka-clients")
    return jars


@pytest.fixture(scope="session")
def bootstrap(trafka_session_broker) -> str:
    return trafka_session_broker.bootstrap_servers


def make_topic(bootstrap: str, name: str, partitions: int = 1, configs: dict | None = None) -> str:
    """Create a topic with kafka-python's admin client (the broker's own test client)."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs or {})])
    finally:
        admin.close()
    return name


CLIENT_NAMES = list(matrix.CLIENTS)


def make_driver(request, name: str, bootstrap: str):
    if name == "kafka-python":
        return drivers.KafkaPython(bootstrap)
    if name == "confluent-kafka":
        return drivers.Confluent(bootstrap)
    if name == "aiokafka":
        return drivers.Aiokafka(bootstrap)
    if name == "kcat":
        return drivers.Kcat(bootstrap, request.getfixturevalue("kcat"))
    if name in NODE_FIXTURES:
        return node_clients.Node(bootstrap, request.getfixturevalue(NODE_FIXTURES[name]))
    fixture = {"java-3.9.1": "java_client_39", "java-4.3.0": "java_client_43"}[name]
    return drivers.Java(bootstrap, request.getfixturevalue(fixture))


@pytest.fixture(params=CLIENT_NAMES)
def client(request, bootstrap):
    """A driver for each client of the matrix (the test's ``client`` parameter names it)."""
    return make_driver(request, request.param, bootstrap)
