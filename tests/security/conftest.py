import pytest

from testkit.security import KEYSTORE_PASSWORD, secure_config
from testkit.tls import make_pki
from trafka.testing import TrafkaBroker


@pytest.fixture(scope="session")
def pki(tmp_path_factory):
    pki = make_pki(tmp_path_factory.mktemp("pki"))
    pki.broker = pki.issue("broker", server=True, password=KEYSTORE_PASSWORD.encode())
    pki.client = pki.issue("alice-client")
    return pki


@pytest.fixture(scope="module")
def secure_broker(pki, tmp_path_factory):
    broker = TrafkaBroker(data_dir=tmp_path_factory.mktemp("secure") / "data", config=secure_config(pki))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()
