import pytest

from testkit.groups import GROUP_BROKER_CONFIG
from trafka.testing import TrafkaBroker


@pytest.fixture
def broker(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", config=GROUP_BROKER_CONFIG) as running:
        yield running
