"""connections.max.reauth.ms (KIP-368): the session lifetime is announced in SaslAuthenticate; a
client that re-authenticates keeps its connection, one that does not is closed at its next
request; a SASL handshake v0 sends bare tokens."""

import struct
import time

import pytest

from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" '
        'user_javaplain="javaplain-secret" user_kafkaplain="kafkaplain-secret" '
        'user_confluentplain="confluentplain-secret";')
LIFETIME_MS = 1500


@pytest.fixture(scope="module")
def reauth_broker(tmp_path_factory):
    broker = TrafkaBroker(data_dir=tmp_path_factory.mktemp("reauth") / "data", config={
        "listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.jaas.config": JAAS,
        "connections.max.reauth.ms": LIFETIME_MS})
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def _login(raw: RawClient, password: str = "alice-secret"):
    assert raw.request(17, 1, {"mechanism": "PLAIN"}).error_code == 0
    return raw.request(36, 2, {"auth_bytes": b"\0alice\0" + password.encode()})


def test_the_session_lifetime_is_announced_and_enforced(reauth_broker):
    bootstrap = reauth_broker.bootstrap("SASL_PLAINTEXT")
    with RawClient(bootstrap) as raw:
        answer = _login(raw)
        assert (answer.error_code, answer.session_lifetime_ms) == (0, LIFETIME_MS)
        assert raw.request(3, 1, {"topics": []}).brokers  # served while the session lives
        reauth_broker.advance_clock(LIFETIME_MS + 300)  # the session ends on the broker clock
        # re-authenticating on the same connection renews the session
        assert _login(raw).error_code == 0
        assert raw.request(3, 1, {"topics": []}).brokers
        reauth_broker.advance_clock(LIFETIME_MS + 300)
        with pytest.raises((ConnectionError, OSError, EOFError, struct.error, ValueError)):
            raw.request(3, 1, {"topics": []})
    assert "expired (connections.max.reauth.ms) without re-authentication" in reauth_broker.log_text()


def test_wrong_password_is_sasl_authentication_failed_and_closes(reauth_broker):
    with RawClient(reauth_broker.bootstrap("SASL_PLAINTEXT")) as raw:
        answer = _login(raw, "wrong")
        assert answer.error_code == 58  # SASL_AUTHENTICATION_FAILED
        assert answer.error_message == "Authentication failed: Invalid username or password"
        with pytest.raises((ConnectionError, OSError, EOFError, struct.error, ValueError)):
            raw.request(18, 0, {})


def test_handshake_v0_then_bare_tokens(reauth_broker):
    with RawClient(reauth_broker.bootstrap("SASL_PLAINTEXT")) as raw:
        assert raw.request(17, 0, {"mechanism": "PLAIN"}).error_code == 0
        token = b"\0alice\0alice-secret"
        raw.send(struct.pack(">i", len(token)) + token)
        assert raw.read_exactly(4) == b"\0\0\0\0"  # an empty bare reply: authenticated
        assert raw.request(3, 1, {"topics": []}).brokers


def _java_producer(bootstrap: str, mechanism: str, principal: str):
    from testkit.java import JavaKafka, JavaUnavailable

    try:
        java = JavaKafka("4.3.0")
    except JavaUnavailable as exc:
        pytest.skip(f"Java kafka-clients 4.3.0 unavailable: {exc}")
    if mechanism == "PLAIN":
        jaas = (f'org.apache.kafka.common.security.plain.PlainLoginModule required username="{principal}" '
                f'password="{principal}-secret";')
    else:  # the unsecured login handler: a token for an hour, re-used at each re-authentication
        jaas = ('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
                f'unsecuredLoginStringClaim_sub="{principal}";')
    producer = java.make_producer({"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT",
                                   "sasl.mechanism": mechanism, "sasl.jaas.config": jaas})
    return (lambda value: producer.send("reauth-topic", value=value)), java.shutdown


def _kafka_python_producer(bootstrap: str, mechanism: str, principal: str):
    from kafka import KafkaProducer

    from testkit.oauth_tokens import TokenSource
    from testkit.security import Auth, kafka_python_config

    auth = Auth("SASL_PLAINTEXT", mechanism, principal, f"{principal}-secret", token=TokenSource(principal))
    producer = KafkaProducer(bootstrap_servers=bootstrap, **kafka_python_config(auth))
    return (lambda value: producer.send("reauth-topic", value).get(timeout=30)), producer.close


def _confluent_producer(bootstrap: str, mechanism: str, principal: str):
    from confluent_kafka import Producer

    from testkit.security import Auth, confluent_config

    producer = Producer({"bootstrap.servers": bootstrap,
                         **confluent_config(Auth("SASL_PLAINTEXT", mechanism, principal, f"{principal}-secret"))})

    def send(value: bytes) -> None:
        errors: list = []
        producer.produce("reauth-topic", value, on_delivery=lambda err, msg: errors.append(err))
        assert producer.flush(30) == 0 and errors == [None], errors

    return send, lambda: producer.flush(5)


@pytest.mark.parametrize("client,mechanism", [("java-4.3.0", "PLAIN"), ("java-4.3.0", "OAUTHBEARER"),
                                              ("kafka-python", "PLAIN"), ("kafka-python", "OAUTHBEARER"),
                                              ("confluent-kafka", "PLAIN"), ("confluent-kafka", "OAUTHBEARER")])
def test_a_client_reauthenticates_and_keeps_working(reauth_broker, client, mechanism):
    """Java, kafka-python 3 and librdkafka (>= 2.2) re-authenticate by themselves before the announced lifetime ends
    (their timers run on the wall clock, so this test waits for them)."""
    principal = f"{client.split('-')[0]}{mechanism.lower()}"
    make = {"java": _java_producer, "kafka": _kafka_python_producer, "confluent": _confluent_producer}[client.split("-")[0]]
    send, close = make(reauth_broker.bootstrap("SASL_PLAINTEXT"), mechanism, principal)
    try:
        before = reauth_broker.log_text().count(f"authenticated User:{principal} ")

        def logins() -> int:
            return reauth_broker.log_text().count(f"authenticated User:{principal} ") - before

        # Keep sending through two sessions' lifetimes while the client's own re-authentication
        # timer runs: a connection that did not re-authenticate in time is closed by the broker
        # ("session ... expired"), and the re-logins count.
        start, sent = time.monotonic(), 0
        lifetimes = lambda: (time.monotonic() - start) / (LIFETIME_MS / 1000)  # noqa: E731
        while (lifetimes() < 2.3 or logins() < 3) and lifetimes() < 10:
            send(f"v{sent}".encode())
            sent += 1
            time.sleep(0.2)
        send(b"last")
        log = reauth_broker.log_text()
        assert logins() >= 3, log[-3000:]  # login + re-logins
        assert f"session of User:{principal} expired" not in log
    finally:
        close()


def test_re_authenticating_with_another_mechanism_is_refused(reauth_broker):
    """As Kafka's SaslServerAuthenticator: the SaslHandshake is answered, the SaslAuthenticate
    after it fails, and the connection is closed."""
    with RawClient(reauth_broker.bootstrap("SASL_PLAINTEXT")) as raw:
        assert _login(raw).error_code == 0
        assert raw.request(17, 1, {"mechanism": "SCRAM-SHA-256"}).error_code == 0
        answer = raw.request(36, 2, {"auth_bytes": b"n,,n=alice,r=abcdef"})
        assert (answer.error_code, answer.error_message) == (
            58, "SASL mechanism 'SCRAM-SHA-256' requested by client is not supported for re-authentication of "
                "mechanism 'PLAIN'")
        with pytest.raises((ConnectionError, OSError, EOFError, struct.error, ValueError)):
            raw.request(3, 1, {"topics": []})
    assert "failed authentication of User:alice from 127.0.0.1:" in reauth_broker.log_text()
