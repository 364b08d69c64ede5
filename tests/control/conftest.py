import pytest

from trafka.testing import TrafkaBroker


@pytest.fixture
def broker(tmp_path):
    """A fresh in-process broker per test (it starts in milliseconds)."""
    with TrafkaBroker(data_dir=tmp_path / "data", in_process=True) as running:
        yield running


def pytest_collection_modifyitems(items):
    """A bound on every test here, so a client stuck on a broker that never answers fails the
    test with a traceback instead of holding up the suite."""
    for item in items:
        if "/tests/control/" in str(item.path) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(180))
