"""The same secured round trip (create a topic by producing, read the record back) with each
Python client, from one description of how to connect (`Auth`; each client's settings for it
live with its other adapters in testkit/clients/<client>.py), and the secured broker's settings."""

from __future__ import annotations

from testkit.clients.aiokafka import aiokafka_config, aiokafka_login_refused, roundtrip_aiokafka
from testkit.clients.base import Auth
from testkit.clients.confluent import confluent_config, confluent_login_errors, roundtrip_confluent, upsert_scram
from testkit.clients.kafka_python import kafka_python_config, kafka_python_login_refused, roundtrip_kafka_python

__all__ = ["Auth", "BOB_JAAS", "KEYSTORE_PASSWORD", "PLAIN_JAAS", "ROUNDTRIPS", "aiokafka_config",
           "aiokafka_login_refused", "confluent_config", "confluent_login_errors", "kafka_python_config",
           "kafka_python_login_refused", "roundtrip_aiokafka", "roundtrip_confluent",
           "roundtrip_kafka_python", "secure_config", "upsert_scram"]

ROUNDTRIPS = {"kafka-python": roundtrip_kafka_python, "confluent-kafka": roundtrip_confluent,
              "aiokafka": roundtrip_aiokafka}


PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
BOB_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="bob-secret";'
KEYSTORE_PASSWORD = "keystore-secret"


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
