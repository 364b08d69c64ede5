import pytest

from trafka.testing import TrafkaBroker

# Short locks so expiry can be watched; the smallest delivery limit Kafka allows.
SHARE_CONFIG = {"group.share.record.lock.duration.ms": 1500, "group.share.delivery.count.limit": 2,
                "group.share.heartbeat.interval.ms": 500, "offsets.topic.num.partitions": 3,
                "share.coordinator.state.topic.num.partitions": 3}


@pytest.fixture
def broker(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", config=SHARE_CONFIG) as running:
        yield running


@pytest.fixture
def long_lock_broker(tmp_path):
    """Locks that outlast any test step, where a test needs held records to stay held."""
    with TrafkaBroker(data_dir=tmp_path / "data", config={**SHARE_CONFIG, "group.share.record.lock.duration.ms": 60000}) as running:
        yield running
