import logging

import pytest

from trafka.storage.clock import ManualClock

# kafka-python logs every reconnect at WARNING/ERROR while a test restarts the broker.
logging.getLogger("kafka").setLevel(logging.CRITICAL)


@pytest.fixture
def clock():
    """A manual clock for storage and coordinators opened in the test's own process."""
    return ManualClock()
