"""pytest plugin (entry point `trafka`): fixtures that give a test a real broker.

- `trafka_broker`: a fresh broker for one test (its own process, port and data directory).
- `trafka_session_broker`: one broker shared by the whole session.
- Each broker fixture's `.console_url` is its HTTP console (pages, /api/v1/, /metrics), and
  `.schema_registry_url` its built-in schema registry (Confluent's REST API), `.rest_proxy_url`
  its REST proxy (Confluent's REST Proxy API v2 and v3).
- `trafka_topic`: a topic name unique to the test, for use with the shared broker.
- `trafka_inprocess_broker`: a fresh broker on trio in a thread of the test process; it starts
  in milliseconds, so every test can have its own.
- `trafka_cluster`: a fresh simulated cluster of three brokers in one process (docs/cluster.md).

`trafka_broker` and `trafka_session_broker` are child processes unless `--trafka-in-process`
(or `trafka_in_process = true` in the ini file) makes them in-process brokers too.

Broker settings, by Kafka's names, for both brokers: `--trafka-config NAME=VALUE` on the
command line (repeatable), or `trafka_config` lines in the ini file; the command line wins.
A test can add settings for its own `trafka_broker` with
`@pytest.mark.trafka_config({"num.partitions": 3})`, or settings made at run time (certificate
paths, a JAAS line) by overriding the `trafka_broker_config` fixture (a dict, default empty) in a
conftest.py or module; markers win over it.

Every broker the plugin starts is stopped when its fixture ends; any still running when the
session ends (an interrupted run) is killed, so none outlives pytest.
"""

from __future__ import annotations

import re
import uuid

import pytest

from trafka.testing.broker import TrafkaBroker

_started: list[TrafkaBroker] = []
_CONFIG = pytest.StashKey[dict]()
_IN_PROCESS = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("trafka", "trafka broker fixtures")
    group.addoption("--trafka-config", action="append", default=[], metavar="NAME=VALUE",
                    help="a broker setting for the trafka fixtures, by Kafka's name (repeatable)")
    parser.addini("trafka_config", type="linelist", default=[],
                  help="broker settings NAME=VALUE for the trafka fixtures, one per line")
    group.addoption("--trafka-in-process", action="store_true", default=None,
                    help="run trafka_broker and trafka_session_broker in the test process")
    parser.addini("trafka_in_process", type="bool", default=False,
                  help="run trafka_broker and trafka_session_broker in the test process")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "trafka_config(settings): broker settings (a dict) for this test's trafka_broker")
    option = config.getoption("trafka_in_process")
    config.stash[_IN_PROCESS] = bool(config.getini("trafka_in_process") if option is None else option)
    config.stash[_CONFIG] = _parse(list(config.getini("trafka_config")) + list(config.getoption("trafka_config") or []))


def _parse(items: list[str]) -> dict[str, str]:
    settings: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise pytest.UsageError(f"trafka config must be NAME=VALUE, got {item!r}")
        settings[name.strip()] = value.strip()
    return settings


def _start(request: pytest.FixtureRequest, data_dir, extra: dict | None = None, in_process: bool | None = None) -> TrafkaBroker:
    config = dict(request.config.stash.get(_CONFIG, {}))
    config.update(extra or {})
    if in_process is None:
        in_process = request.config.stash.get(_IN_PROCESS, False)
    broker = TrafkaBroker(data_dir=data_dir, config=config, in_process=in_process)
    _started.append(broker)
    return broker.start()


def _close(broker: TrafkaBroker) -> None:
    try:
        broker.close()
    finally:
        if broker in _started:
            _started.remove(broker)


def _marked_config(request) -> dict:
    extra: dict = dict(request.getfixturevalue("trafka_broker_config"))
    for marker in reversed(list(request.node.iter_markers("trafka_config"))):
        extra.update(*marker.args, **marker.kwargs)
    return extra


@pytest.fixture
def trafka_broker_config() -> dict:
    """Settings for this test's `trafka_broker`/`trafka_inprocess_broker`; override it to give
    settings that other fixtures make (e.g. TLS keystores and listeners):

        @pytest.fixture
        def trafka_broker_config(my_keystore):
            return {"listeners": "SASL_SSL://127.0.0.1:0", "ssl.keystore.location": str(my_keystore), ...}
    """
    return {}


@pytest.fixture
def trafka_broker(request, tmp_path):
    broker = _start(request, tmp_path / "data", _marked_config(request))
    try:
        yield broker
    finally:
        _close(broker)


@pytest.fixture
def trafka_inprocess_broker(request, tmp_path):
    broker = _start(request, tmp_path / "inprocess-data", _marked_config(request), in_process=True)
    try:
        yield broker
    finally:
        _close(broker)


@pytest.fixture
def trafka_cluster(request, tmp_path):
    """A simulated cluster of three brokers in one process (`cluster.brokers=3`, node ids 0-2,
    broker i in rack "abc..."[i]); `.bootstrap_servers` names them all, `.broker_addresses` each one.
    `@pytest.mark.trafka_config` settings apply to it too (e.g. another `cluster.brokers`)."""
    config = {"cluster.brokers": 3, **_marked_config(request)}
    config.setdefault("cluster.broker.racks", ",".join("abcdefghijklmnop"[:int(config["cluster.brokers"])]))
    broker = _start(request, tmp_path / "cluster-data", config)
    try:
        yield broker
    finally:
        _close(broker)


@pytest.fixture(scope="session")
def trafka_session_broker(request, tmp_path_factory):
    broker = _start(request, tmp_path_factory.mktemp("trafka") / "data")
    try:
        yield broker
    finally:
        _close(broker)


@pytest.fixture
def trafka_topic(request) -> str:
    base = re.sub(r"[^a-zA-Z0-9._-]", "-", request.node.name)[:200]
    return f"{base}-{uuid.uuid4().hex[:8]}"


def pytest_unconfigure(config: pytest.Config) -> None:
    while _started:
        _started.pop().kill()
