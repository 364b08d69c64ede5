import pytest

from testkit.groups import GROUP_BROKER_CONFIG
from testkit.java import running_jvm
from trafka.testing import TrafkaBroker


@pytest.fixture
def broker(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", config=GROUP_BROKER_CONFIG) as running:
        yield running


@pytest.fixture
def consumer_broker(tmp_path):
    """A broker for group.protocol=consumer members: they heartbeat every 300 ms, not 5 s."""
    config = {**GROUP_BROKER_CONFIG, "group.consumer.heartbeat.interval.ms": 300}
    with TrafkaBroker(data_dir=tmp_path / "data", config=config) as running:
        yield running


@pytest.fixture(scope="module")
def java():
    """Java kafka-clients 4.3.0, one JVM a module (skips where Java cannot run)."""
    yield from running_jvm("4.3.0")
