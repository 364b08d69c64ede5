import pytest

from trafka.testing import TrafkaBroker

# Short enough for quick tests, as a developer would set them against a local broker.
SESSION_TIMEOUT_MS = 6000
HEARTBEAT_INTERVAL_MS = 1000
GROUP_BROKER_CONFIG = {
    "offsets.topic.num.partitions": 10,
    # Consumers started together land in one rebalance instead of one each.
    "group.initial.rebalance.delay.ms": 300,
}


@pytest.fixture
def broker(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", config=GROUP_BROKER_CONFIG) as running:
        yield running
