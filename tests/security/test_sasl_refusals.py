"""Refused logins for kafka-python, confluent-kafka and aiokafka on one broker: wrong passwords and
unknown users with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 on SASL_PLAINTEXT and SASL_SSL, and an
mTLS login without a client certificate. Each client fails to connect and reports the broker's
SASL_AUTHENTICATION_FAILED message (kafka-python and aiokafka in their logs, librdkafka through
error_cb); the broker logs one line naming the principal and the peer, never a traceback."""

import logging

import pytest

from testkit.security import (
    Auth, aiokafka_login_refused, confluent_login_errors, kafka_python_login_refused, upsert_scram,
)
from trafka.testing.waiting import wait_for_log

USERS = {"SCRAM-SHA-256": ("rita256", "rita-secret-256"), "SCRAM-SHA-512": ("rita512", "rita-secret-512")}
BAD_PLAIN = "Authentication failed: Invalid username or password"


def _bad_scram(mechanism: str) -> str:
    return f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"


@pytest.fixture(scope="module")
def refusal_users(secure_broker):
    for mechanism, (user, password) in USERS.items():
        upsert_scram(secure_broker.bootstrap("PLAINTEXT"), user, password, mechanism)
    return USERS


# case -> (listener, protocol, mechanism, user, password, the broker's message)
CASES = {
    "PLAIN-wrong-password": ("SASL_PLAINTEXT", "PLAIN", "alice", "wrong", BAD_PLAIN),
    "PLAIN-unknown-user": ("SASL_PLAINTEXT", "PLAIN", "mallory", "alice-secret", BAD_PLAIN),
    "SCRAM-SHA-256-wrong-password": ("SASL_PLAINTEXT", "SCRAM-SHA-256", "rita256", "wrong", _bad_scram("SCRAM-SHA-256")),
    "SCRAM-SHA-256-unknown-user": ("SASL_PLAINTEXT", "SCRAM-SHA-256", "nobody256", "x", _bad_scram("SCRAM-SHA-256")),
    "SCRAM-SHA-512-wrong-password": ("SASL_PLAINTEXT", "SCRAM-SHA-512", "rita512", "wrong", _bad_scram("SCRAM-SHA-512")),
    "SCRAM-SHA-512-unknown-user": ("SASL_PLAINTEXT", "SCRAM-SHA-512", "nobody512", "x", _bad_scram("SCRAM-SHA-512")),
    # alice is a PLAIN user of SASL_PLAINTEXT only: SASL_SSL has its own JAAS line (bob)
    "SASL_SSL-PLAIN-user-of-another-listener": ("SASL_SSL", "PLAIN", "alice", "alice-secret", BAD_PLAIN),
    "SASL_SSL-SCRAM-SHA-512-wrong-password": ("SASL_SSL", "SCRAM-SHA-512", "rita512", "wrong", _bad_scram("SCRAM-SHA-512")),
}


def _client_messages(client: str, bootstrap: str, auth: Auth, caplog) -> str:
    """Everything the client said about its failed login."""
    if client == "confluent-kafka":
        return "\n".join(confluent_login_errors(bootstrap, auth))
    logger = "kafka" if client == "kafka-python" else "aiokafka"  # tests/conftest.py quiets "kafka"
    with caplog.at_level(logging.DEBUG, logger=logger):
        (kafka_python_login_refused if client == "kafka-python" else aiokafka_login_refused)(bootstrap, auth)
    return "\n".join(record.getMessage() for record in caplog.records)


@pytest.mark.parametrize("client", ["kafka-python", "confluent-kafka", "aiokafka"])
@pytest.mark.parametrize("case", list(CASES))
def test_refused_login(secure_broker, refusal_users, pki, client, case, caplog):
    listener, mechanism, user, password, message = CASES[case]
    auth = Auth(listener, mechanism, user, password, ca=pki.ca_pem if listener == "SASL_SSL" else None)
    said = _client_messages(client, secure_broker.bootstrap(listener), auth, caplog)
    assert message in said, said
    wait_for_log(secure_broker, f"failed authentication of User:{user} from 127.0.0.1:")
    assert "Traceback" not in secure_broker.log_text()


@pytest.mark.parametrize("client", ["kafka-python", "confluent-kafka", "aiokafka"])
def test_mtls_without_a_client_certificate_is_refused(secure_broker, pki, client, caplog):
    auth = Auth("SSL", ca=pki.ca_pem)
    before = secure_broker.log_text().count("TLS handshake failed on listener MTLS")
    said = _client_messages(client, secure_broker.bootstrap("MTLS"), auth, caplog)
    if client == "confluent-kafka":
        assert "certificate required" in said, said
    wait_for_log(secure_broker, "PEER_DID_NOT_RETURN_A_CERTIFICATE")
    assert secure_broker.log_text().count("TLS handshake failed on listener MTLS") > before


@pytest.mark.parametrize("client", ["kafka-python", "confluent-kafka", "aiokafka"])
@pytest.mark.parametrize("direction", ["plaintext-to-TLS", "TLS-to-plaintext"])
def test_a_client_of_the_wrong_protocol_is_disconnected_with_a_clear_line(secure_broker, pki, client, direction, caplog):
    if direction == "plaintext-to-TLS":
        listener, auth, line = "SSL", Auth("PLAINTEXT"), "(is the client speaking plaintext to a TLS listener?)"
    else:
        listener, auth, line = "PLAINTEXT", Auth("SSL", ca=pki.ca_pem), "the client started a TLS handshake on a listener without TLS"
    before = secure_broker.log_text().count(line)
    said = _client_messages(client, secure_broker.bootstrap(listener), auth, caplog)
    if client == "confluent-kafka":
        assert said  # librdkafka reports the transport failure
    wait_for_log(secure_broker, line)
    assert secure_broker.log_text().count(line) > before
