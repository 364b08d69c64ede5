import pytest

from trafka.testing import TrafkaBroker


@pytest.fixture
def broker(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data") as running:
        yield running


@pytest.fixture
def registry(broker):
    """The broker's schema registry URL."""
    assert broker.schema_registry_url, "the broker runs without its schema registry"
    return broker.schema_registry_url.rstrip("/")
