"""The command line and configuration: `trafka serve` settings and properties files, the
inspection commands (dump-log, describe, groups, transactions), the settings table and its page."""

import pytest

from testkit.groups import GROUP_BROKER_CONFIG
from trafka.testing import TrafkaBroker


@pytest.fixture
def broker(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", config=GROUP_BROKER_CONFIG) as running:
        yield running
