"""Java kafka-clients 3.9.1 and 4.3.0 (py4j, compat_tests/java.py) against the SASL_PLAINTEXT
(SCRAM-SHA-256), SASL_SSL (PLAIN) and mTLS listeners of one broker."""

import uuid

import pytest
from test_sasl_tls_clients import upsert_scram

from compat_tests.java import JavaKafka, JavaUnavailable


@pytest.fixture(scope="module", params=["3.9.1", "4.3.0"])
def java(request):
    try:
        kafka = JavaKafka(request.param)
    except JavaUnavailable as exc:
        pytest.skip(f"Java kafka-clients {request.param} unavailable: {exc}")
    try:
        yield kafka
    finally:
        kafka.shutdown()


def _cases(pki):
    trust = {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem)}
    return {
        "SASL_PLAINTEXT-SCRAM-SHA-256": ("SASL_PLAINTEXT", {
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                                'username="javauser" password="java-secret";'}),
        "SASL_SSL-PLAIN": ("SASL_SSL", {
            "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", **trust,
            "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                                'username="bob" password="bob-secret";'}),
        "MTLS": ("MTLS", {
            "security.protocol": "SSL", **trust, "ssl.keystore.type": "PEM",
            "ssl.keystore.certificate.chain": pki.client["cert.pem"].read_text(),
            "ssl.keystore.key": pki.client["key.pem"].read_text()}),
    }


@pytest.mark.parametrize("case", ["SASL_PLAINTEXT-SCRAM-SHA-256", "SASL_SSL-PLAIN", "MTLS"])
def test_java_roundtrip(java, secure_broker, pki, case):
    upsert_scram(secure_broker.bootstrap("PLAINTEXT"), "javauser", "java-secret", "SCRAM-SHA-256")
    listener, props = _cases(pki)[case]
    props = {"bootstrap.servers": secure_broker.bootstrap(listener), **props}
    topic = f"java-{uuid.uuid4().hex[:8]}"
    try:
        java.make_producer(props).send(topic, key=b"k", value=b"java-value")
        consumer = java.make_consumer({**props, "group.id": topic})
        consumer.assign([(topic, 0)])
        consumer.seekToBeginning()
        records = []
        for _ in range(20):
            records += consumer.poll(500)
            if records:
                break
        assert [r.value for r in records] == [b"java-value"]
    finally:
        java.close_clients()
