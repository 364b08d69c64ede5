"""SCRAM credentials and TLS settings survive a restart, and every client that was connected
before it logs in again by itself: kafka-python, confluent-kafka, aiokafka and Java 3.9.1/4.3.0
each keep a SASL_SSL (SCRAM) producer and an mTLS producer open across a broker restart and send
with both afterwards; kcat logs in with the stored credentials after it. A deleted credential
stays deleted. One broker for the module, restarted once per client."""

import asyncio
import shutil
import subprocess
import uuid

import pytest

from testkit.clients.kcat import kcat_options
from testkit.security import Auth, aiokafka_config, confluent_config, kafka_python_config, secure_config, upsert_scram
from trafka.testing import TrafkaBroker

USERS = {"SCRAM-SHA-256": ("ursula256", "ursula-secret-256"), "SCRAM-SHA-512": ("ursula512", "ursula-secret-512")}


@pytest.fixture(scope="module")
def restart_broker(pki, tmp_path_factory):
    broker = TrafkaBroker(data_dir=tmp_path_factory.mktemp("restart") / "data", config=secure_config(pki))
    broker.start()
    try:
        for mechanism, (user, password) in USERS.items():
            upsert_scram(broker.bootstrap("PLAINTEXT"), user, password, mechanism)
        yield broker
    finally:
        broker.stop()
    assert "Traceback" not in broker.log_text()


def _auths(pki) -> dict[str, tuple[str, Auth]]:
    return {
        "scram": ("SASL_SSL", Auth("SASL_SSL", "SCRAM-SHA-512", *USERS["SCRAM-SHA-512"], ca=pki.ca_pem)),
        "mtls": ("MTLS", Auth("SSL", ca=pki.ca_pem, cert=pki.client["cert.pem"], key=pki.client["key.pem"])),
    }


def _kafka_python(broker, pki, topic: str) -> dict[str, list[bytes]]:
    from kafka import KafkaConsumer, KafkaProducer

    producers = {name: KafkaProducer(bootstrap_servers=broker.bootstrap(listener), **kafka_python_config(auth))
                 for name, (listener, auth) in _auths(pki).items()}
    try:
        for name, producer in producers.items():
            producer.send(f"{topic}-{name}", b"before").get(timeout=30)
        broker.restart()
        for name, producer in producers.items():
            producer.send(f"{topic}-{name}", b"after").get(timeout=60)
    finally:
        for producer in producers.values():
            producer.close()
    read = {}
    for name, (listener, auth) in _auths(pki).items():
        consumer = KafkaConsumer(f"{topic}-{name}", bootstrap_servers=broker.bootstrap(listener),
                                 auto_offset_reset="earliest", consumer_timeout_ms=15000, **kafka_python_config(auth))
        try:
            read[name] = [message.value for _, message in zip(range(2), consumer)]
        finally:
            consumer.close()
    return read


def _confluent(broker, pki, topic: str) -> dict[str, list[bytes]]:
    from confluent_kafka import Consumer, Producer

    configs = {name: {"bootstrap.servers": broker.bootstrap(listener), **confluent_config(auth)}
               for name, (listener, auth) in _auths(pki).items()}
    producers = {name: Producer(config) for name, config in configs.items()}
    errors: list = []
    for value in (b"before", b"after"):
        for name, producer in producers.items():
            producer.produce(f"{topic}-{name}", value, on_delivery=lambda err, msg: errors.append(err))
            assert producer.flush(60) == 0
        if value == b"before":
            broker.restart()
    assert errors == [None] * 4, errors
    read = {}
    for name, config in configs.items():
        consumer = Consumer({**config, "group.id": f"{topic}-{name}", "auto.offset.reset": "earliest"})
        try:
            consumer.subscribe([f"{topic}-{name}"])
            values: list[bytes] = []
            for _ in range(30):
                message = consumer.poll(1)
                if message is not None and not message.error():
                    values.append(message.value())
                if len(values) == 2:
                    break
            read[name] = values
        finally:
            consumer.close()
    return read


def _aiokafka(broker, pki, topic: str) -> dict[str, list[bytes]]:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    async def run() -> dict[str, list[bytes]]:
        producers = {name: AIOKafkaProducer(bootstrap_servers=broker.bootstrap(listener), **aiokafka_config(auth))
                     for name, (listener, auth) in _auths(pki).items()}
        for producer in producers.values():
            await producer.start()
        try:
            for name, producer in producers.items():
                await producer.send_and_wait(f"{topic}-{name}", b"before")
            await asyncio.get_running_loop().run_in_executor(None, broker.restart)
            for name, producer in producers.items():
                await producer.send_and_wait(f"{topic}-{name}", b"after")
        finally:
            for producer in producers.values():
                await producer.stop()
        read = {}
        for name, (listener, auth) in _auths(pki).items():
            consumer = AIOKafkaConsumer(f"{topic}-{name}", bootstrap_servers=broker.bootstrap(listener),
                                        auto_offset_reset="earliest", **aiokafka_config(auth))
            await consumer.start()
            try:
                values: list[bytes] = []
                while len(values) < 2:
                    batch = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 20)
                    values += [message.value for messages in batch.values() for message in messages]
                read[name] = values
            finally:
                await consumer.stop()
        return read

    return asyncio.run(run())


def _java_props(listener: str, auth: Auth, pki) -> dict:
    props = {"security.protocol": auth.protocol, "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem)}
    if auth.mechanism:
        props.update({"sasl.mechanism": auth.mechanism, "sasl.jaas.config":
                      f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{auth.user}" '
                      f'password="{auth.password}";'})
    if auth.cert:
        props.update({"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": auth.cert.read_text(),
                      "ssl.keystore.key": auth.key.read_text()})
    return props


def _java(version: str):
    def run(broker, pki, topic: str) -> dict[str, list[bytes]]:
        from testkit.java import JavaKafka, JavaUnavailable

        try:
            java = JavaKafka(version)
        except JavaUnavailable as exc:
            pytest.skip(f"Java kafka-clients {version} unavailable: {exc}")
        try:
            props = {name: {"bootstrap.servers": broker.bootstrap(listener), **_java_props(listener, auth, pki)}
                     for name, (listener, auth) in _auths(pki).items()}
            producers = {name: java.make_producer(p) for name, p in props.items()}
            for name, producer in producers.items():
                producer.send(f"{topic}-{name}", value=b"before")
            broker.restart()
            for name, producer in producers.items():
                producer.send(f"{topic}-{name}", value=b"after", timeout_s=60)
            read = {}
            for name, p in props.items():
                consumer = java.make_consumer({**p, "group.id": f"{topic}-{name}"})
                consumer.assign([(f"{topic}-{name}", 0)])
                consumer.seekToBeginning()
                read[name] = [r.value for r in consumer.poll_until(2, timeout_s=20)]
            return read
        finally:
            java.shutdown()

    return run


CLIENTS = {"kafka-python": _kafka_python, "confluent-kafka": _confluent, "aiokafka": _aiokafka,
           "java-3.9.1": _java("3.9.1"), "java-4.3.0": _java("4.3.0")}


@pytest.mark.parametrize("client", list(CLIENTS))
def test_connected_clients_log_in_again_after_a_restart(restart_broker, pki, client):
    """The same producer objects send "before", then (after the restart, on new connections that
    log in again with the stored credential and the client certificate) "after"."""
    topic = f"restart-{client}-{uuid.uuid4().hex[:6]}"
    read = CLIENTS[client](restart_broker, pki, topic)
    assert read == {"scram": [b"before", b"after"], "mtls": [b"before", b"after"]}


@pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat is not installed (testkit/setup_deps.py)")
def test_kcat_logs_in_with_the_stored_credential_after_a_restart(restart_broker, pki):
    user, password = USERS["SCRAM-SHA-256"]
    restart_broker.restart()
    options = kcat_options(Auth("SASL_SSL", "SCRAM-SHA-256", user, password, ca=pki.ca_pem))
    base = [shutil.which("kcat"), "-b", restart_broker.bootstrap("SASL_SSL"), *options]
    topic = f"restart-kcat-{uuid.uuid4().hex[:6]}"
    subprocess.run([*base, "-P", "-t", topic], input=b"after-restart\n", check=True, timeout=60)
    out = subprocess.run([*base, "-C", "-t", topic, "-o", "beginning", "-c", "1", "-e"], capture_output=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == b"after-restart"


def test_a_deleted_credential_stays_deleted_after_a_restart(restart_broker):
    from confluent_kafka.admin import AdminClient, ScramMechanism, UserScramCredentialDeletion

    upsert_scram(restart_broker.bootstrap("PLAINTEXT"), "victor", "victor-secret", "SCRAM-SHA-256")
    admin = AdminClient({"bootstrap.servers": restart_broker.bootstrap("PLAINTEXT")})
    for future in admin.alter_user_scram_credentials(
            [UserScramCredentialDeletion("victor", ScramMechanism.SCRAM_SHA_256)]).values():
        future.result(30)
    restart_broker.restart()
    from testkit.security import confluent_login_errors

    errors = confluent_login_errors(restart_broker.bootstrap("SASL_PLAINTEXT"),
                                    Auth("SASL_PLAINTEXT", "SCRAM-SHA-256", "victor", "victor-secret"))
    assert any("invalid credentials with SASL mechanism SCRAM-SHA-256" in e for e in errors), errors
