import pytest
from tls_certs import make_pki

from trafka.testing import TrafkaBroker

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
BOB_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="bob-secret";'
KEYSTORE_PASSWORD = "keystore-secret"


@pytest.fixture(scope="session")
def pki(tmp_path_factory):
    pki = make_pki(tmp_path_factory.mktemp("pki"))
    pki.broker = pki.issue("broker", server=True, password=KEYSTORE_PASSWORD.encode())
    pki.client = pki.issue("alice-client")
    return pki


def secure_config(pki) -> dict:
    """Every kind of listener on one broker: PLAINTEXT, SASL_PLAINTEXT, SSL (PKCS12 keystore),
    SASL_SSL, and MTLS (an SSL listener with a PEM keystore and ssl.client.auth=required)."""
    return {
        "listeners": ",".join(f"{n}://127.0.0.1:0" for n in ("PLAINTEXT", "SASL_PLAINTEXT", "SSL", "SASL_SSL", "MTLS")),
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL,MTLS:SSL",
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": pki.broker["keystore.p12"],
        "ssl.keystore.password": KEYSTORE_PASSWORD,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": pki.ca_pem,
        "listener.name.mtls.ssl.client.auth": "required",
        "listener.name.mtls.ssl.keystore.type": "PEM",
        "listener.name.mtls.ssl.keystore.location": pki.broker["bundle.pem"],
        "listener.name.mtls.ssl.key.password": KEYSTORE_PASSWORD,
        "sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_ssl.plain.sasl.jaas.config": BOB_JAAS,
    }


@pytest.fixture(scope="module")
def secure_broker(pki, tmp_path_factory):
    broker = TrafkaBroker(data_dir=tmp_path_factory.mktemp("secure") / "data", config=secure_config(pki))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()
