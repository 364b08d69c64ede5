import pytest

from trafka.testing import TrafkaBroker


@pytest.fixture
def broker(tmp_path):
    """A fresh in-process broker per test (it starts in milliseconds)."""
    with TrafkaBroker(data_dir=tmp_path / "data", in_process=True) as running:
        yield running
