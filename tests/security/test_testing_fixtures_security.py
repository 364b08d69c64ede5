"""trafka.testing with security settings: TrafkaBroker with only a SASL_SSL listener, and the
pytest plugin's trafka_broker / trafka_inprocess_broker given TLS and SASL settings made at run
time through the trafka_broker_config fixture (certificates from the session's test CA)."""

import pytest

from testkit.security import KEYSTORE_PASSWORD, Auth, roundtrip_confluent, roundtrip_kafka_python
from trafka.testing import TrafkaBroker

JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_tess="tess-secret";'


def _sasl_ssl_config(pki) -> dict:
    return {
        "listeners": "SASL_SSL://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN",
        "sasl.jaas.config": JAAS,
        "ssl.keystore.location": str(pki.broker["keystore.p12"]),
        "ssl.keystore.password": KEYSTORE_PASSWORD,
    }


def test_trafka_broker_with_only_a_sasl_ssl_listener(pki, tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", config=_sasl_ssl_config(pki)) as broker:
        # the one listener is the bootstrap address too
        assert broker.bootstrap_servers == broker.bootstrap("SASL_SSL")
        auth = Auth("SASL_SSL", "PLAIN", "tess", "tess-secret", ca=pki.ca_pem)
        assert roundtrip_confluent(broker.bootstrap_servers, auth).startswith(b"sec-")
        broker.restart()  # the listener comes back on its port, with its TLS settings
        assert roundtrip_kafka_python(broker.bootstrap("SASL_SSL"), auth).startswith(b"sec-")


@pytest.fixture
def trafka_broker_config(pki):
    """Overrides the plugin's: every trafka_broker in this module has SASL_SSL and mTLS."""
    return {**_sasl_ssl_config(pki),
            "listeners": "SASL_SSL://127.0.0.1:0,MTLS://127.0.0.1:0",
            "listener.security.protocol.map": "SASL_SSL:SASL_SSL,MTLS:SSL",
            "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem),
            "listener.name.mtls.ssl.client.auth": "required"}


@pytest.mark.parametrize("fixture", ["trafka_broker", "trafka_inprocess_broker"])
def test_the_pytest_fixtures_take_security_settings(request, pki, fixture):
    broker = request.getfixturevalue(fixture)
    sasl = Auth("SASL_SSL", "PLAIN", "tess", "tess-secret", ca=pki.ca_pem)
    assert roundtrip_confluent(broker.bootstrap("SASL_SSL"), sasl).startswith(b"sec-")
    mtls = Auth("SSL", ca=pki.ca_pem, cert=pki.client["cert.pem"], key=pki.client["key.pem"])
    assert roundtrip_kafka_python(broker.bootstrap("MTLS"), mtls).startswith(b"sec-")


@pytest.mark.trafka_config({"sasl.jaas.config": JAAS.replace("tess-secret", "marker-secret")})
def test_a_marker_wins_over_trafka_broker_config(trafka_broker, pki):
    auth = Auth("SASL_SSL", "PLAIN", "tess", "marker-secret", ca=pki.ca_pem)
    assert roundtrip_confluent(trafka_broker.bootstrap("SASL_SSL"), auth).startswith(b"sec-")
