"""The same secured round trip (create a topic by producing, read the record back) with each
Python client, from one description of how to connect."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Auth:
    protocol: str  # PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
    mechanism: str | None = None
    user: str | None = None
    password: str | None = None
    ca: Path | None = None
    cert: Path | None = None  # client certificate and key, for mTLS
    key: Path | None = None
    token: object = None  # OAUTHBEARER with kafka-python/aiokafka: an oauth_tokens.TokenSource


def kafka_python_config(auth: Auth) -> dict:
    config = {"security_protocol": auth.protocol}
    if auth.mechanism == "OAUTHBEARER":
        from testkit.oauth_tokens import kafka_python_provider

        config.update(sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=kafka_python_provider(auth.token))
    elif auth.mechanism:
        config.update(sasl_mechanism=auth.mechanism, sasl_plain_username=auth.user, sasl_plain_password=auth.password)
    if auth.ca:
        config.update(ssl_cafile=str(auth.ca), ssl_check_hostname=True)
    if auth.cert:
        config.update(ssl_certfile=str(auth.cert), ssl_keyfile=str(auth.key))
    return config


def confluent_config(auth: Auth) -> dict:
    config = {"security.protocol": auth.protocol}
    if auth.mechanism:
        config["sasl.mechanisms"] = auth.mechanism
        if auth.mechanism == "OAUTHBEARER":
            config["sasl.oauthbearer.config"] = f"principal={auth.user}"
            config["enable.sasl.oauthbearer.unsecure.jwt"] = True
        else:
            config.update({"sasl.username": auth.user, "sasl.password": auth.password})
    if auth.ca:
        config["ssl.ca.location"] = str(auth.ca)
    if auth.cert:
        config.update({"ssl.certificate.location": str(auth.cert), "ssl.key.location": str(auth.key)})
    return config


def aiokafka_config(auth: Auth) -> dict:
    from aiokafka.helpers import create_ssl_context

    config = {"security_protocol": auth.protocol}
    if auth.mechanism == "OAUTHBEARER":
        from testkit.oauth_tokens import aiokafka_provider

        config.update(sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=aiokafka_provider(auth.token))
    elif auth.mechanism:
        config.update(sasl_mechanism=auth.mechanism, sasl_plain_username=auth.user, sasl_plain_password=auth.password)
    if auth.ca:
        config["ssl_context"] = create_ssl_context(
            cafile=str(auth.ca), certfile=str(auth.cert) if auth.cert else None,
            keyfile=str(auth.key) if auth.key else None)
    return config


def roundtrip_kafka_python(bootstrap: str, auth: Auth) -> bytes:
    from kafka import KafkaConsumer, KafkaProducer

    topic = f"sec-{uuid.uuid4().hex[:8]}"
    value = topic.encode()
    producer = KafkaProducer(bootstrap_servers=bootstrap, **kafka_python_config(auth))
    try:
        producer.send(topic, value).get(timeout=30)
    finally:
        producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=15000, **kafka_python_config(auth))
    try:
        return next(iter(consumer)).value
    finally:
        consumer.close()


def roundtrip_confluent(bootstrap: str, auth: Auth) -> bytes:
    from confluent_kafka import Consumer, Producer

    topic = f"sec-{uuid.uuid4().hex[:8]}"
    config = {"bootstrap.servers": bootstrap, **confluent_config(auth)}
    producer = Producer(config)
    errors = []
    producer.produce(topic, topic.encode(), on_delivery=lambda err, msg: errors.append(err))
    assert producer.flush(30) == 0 and errors == [None], errors
    consumer = Consumer({**config, "group.id": topic, "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        for _ in range(30):
            message = consumer.poll(1)
            if message is not None and not message.error():
                return message.value()
        raise AssertionError("no record came back")
    finally:
        consumer.close()


def roundtrip_aiokafka(bootstrap: str, auth: Auth) -> bytes:
    async def run() -> bytes:
        from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

        topic = f"sec-{uuid.uuid4().hex[:8]}"
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, **aiokafka_config(auth))
        await producer.start()
        try:
            await producer.send_and_wait(topic, topic.encode())
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                    **aiokafka_config(auth))
        await consumer.start()
        try:
            message = await asyncio.wait_for(consumer.getone(), 20)
            return message.value
        finally:
            await consumer.stop()

    return asyncio.run(run())


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


def upsert_scram(bootstrap: str, user: str, password: str, mechanism: str, **auth) -> None:
    from confluent_kafka.admin import (AdminClient, ScramCredentialInfo, ScramMechanism,
                                       UserScramCredentialUpsertion)

    admin = AdminClient({"bootstrap.servers": bootstrap, **auth})
    info = ScramCredentialInfo(getattr(ScramMechanism, mechanism.replace("-", "_")), 4096)
    futures = admin.alter_user_scram_credentials([UserScramCredentialUpsertion(user, info, password.encode())])
    for future in futures.values():
        future.result(30)


def confluent_login_errors(bootstrap: str, auth: Auth, principal_claim: str | None = None) -> list[str]:
    """The errors librdkafka reports while it tries to log in (error_cb runs inside poll).
    `principal_claim`: an OAUTHBEARER token that names its principal in this claim instead of sub."""
    from confluent_kafka import Producer

    errors: list[str] = []
    config = confluent_config(auth)
    if principal_claim:
        config["sasl.oauthbearer.config"] = f"principal={auth.user} principalClaimName={principal_claim}"
    producer = Producer({"bootstrap.servers": bootstrap, **config,
                         "error_cb": lambda e: errors.append(str(e))})
    deadline = time.monotonic() + 10
    while not errors and time.monotonic() < deadline:
        producer.poll(0.2)
    return errors
