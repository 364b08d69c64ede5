import pytest

from testkit.acl import acl_broker
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


@pytest.fixture(scope="module")
def broker(request, tmp_path_factory):
    """The ACL broker of one test module (testkit.acl: StandardAuthorizer, PLAIN users admin (super
    user), alice and bob, PLAINTEXT and SASL_PLAINTEXT listeners). A module that needs other
    settings defines its own `broker`."""
    broker = acl_broker(tmp_path_factory.mktemp(request.module.__name__.rpartition(".")[2]) / "data")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()
