"""kafka-python, confluent-kafka and aiokafka against every kind of listener of one broker:
SASL_PLAINTEXT and SASL_SSL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER), SSL and mTLS;
refused logins: test_sasl_refusals.py."""

import socket

import pytest

from testkit.oauth_tokens import TokenSource
from testkit.security import ROUNDTRIPS, Auth, upsert_scram
from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_for_log

SCRAM_USERS = {"SCRAM-SHA-256": ("sam256", "sam-secret-256"), "SCRAM-SHA-512": ("sam512", "sam-secret-512")}


@pytest.fixture(scope="module")
def scram_users(secure_broker):
    for mechanism, (user, password) in SCRAM_USERS.items():
        upsert_scram(secure_broker.bootstrap("PLAINTEXT"), user, password, mechanism)
    return SCRAM_USERS


def listener_auths(pki, scram):
    return {
        "SASL_PLAINTEXT-PLAIN": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret")),
        "SASL_PLAINTEXT-SCRAM-SHA-256": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "SCRAM-SHA-256", *scram["SCRAM-SHA-256"])),
        "SASL_PLAINTEXT-SCRAM-SHA-512": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "SCRAM-SHA-512", *scram["SCRAM-SHA-512"])),
        "SSL": ("SSL", Auth("SSL", ca=pki.ca_pem)),
        "SASL_SSL-PLAIN": ("SASL_SSL", Auth("SASL_SSL", "PLAIN", "bob", "bob-secret", ca=pki.ca_pem)),
        "SASL_PLAINTEXT-OAUTHBEARER": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "OAUTHBEARER", "oauth-user",
                                                             token=TokenSource("oauth-user"))),
        "SASL_SSL-SCRAM-SHA-256": ("SASL_SSL", Auth("SASL_SSL", "SCRAM-SHA-256", *scram["SCRAM-SHA-256"], ca=pki.ca_pem)),
        "SASL_SSL-SCRAM-SHA-512": ("SASL_SSL", Auth("SASL_SSL", "SCRAM-SHA-512", *scram["SCRAM-SHA-512"], ca=pki.ca_pem)),
        "SASL_SSL-OAUTHBEARER": ("SASL_SSL", Auth("SASL_SSL", "OAUTHBEARER", "oauth-user", ca=pki.ca_pem,
                                                 token=TokenSource("oauth-user"))),
        "MTLS": ("MTLS", Auth("SSL", ca=pki.ca_pem, cert=pki.client["cert.pem"], key=pki.client["key.pem"])),
    }


@pytest.mark.parametrize("client", sorted(ROUNDTRIPS))
@pytest.mark.parametrize("case", ["SASL_PLAINTEXT-PLAIN", "SASL_PLAINTEXT-SCRAM-SHA-256", "SASL_PLAINTEXT-SCRAM-SHA-512",
                                  "SASL_PLAINTEXT-OAUTHBEARER", "SSL", "SASL_SSL-PLAIN", "SASL_SSL-SCRAM-SHA-256",
                                  "SASL_SSL-SCRAM-SHA-512", "SASL_SSL-OAUTHBEARER", "MTLS"])
def test_roundtrip(secure_broker, scram_users, pki, client, case):
    listener, auth = listener_auths(pki, scram_users)[case]
    bootstrap = secure_broker.bootstrap(listener)
    assert ROUNDTRIPS[client](bootstrap, auth).startswith(b"sec-")


def test_metadata_answers_with_the_listener_the_client_came_in_on(secure_broker):
    from confluent_kafka.admin import AdminClient

    for listener in ("PLAINTEXT", "SSL"):
        config = {"bootstrap.servers": secure_broker.bootstrap(listener)}
        if listener == "SSL":
            config.update({"security.protocol": "SSL", "enable.ssl.certificate.verification": False})
        brokers = AdminClient(config).list_topics(timeout=20).brokers
        assert [f"{b.host}:{b.port}" for b in brokers.values()] == [secure_broker.bootstrap(listener)]


def test_no_request_but_api_versions_and_sasl_before_authentication(secure_broker):
    with RawClient(secure_broker.bootstrap("SASL_PLAINTEXT"), "test") as raw:
        raw.send(raw.frame(3, 1, {"topics": []}))  # Metadata v1
        assert raw.sock.recv(100) == b""  # closed without an answer
    wait_for_log(secure_broker, "before SASL authentication completed on listener SASL_PLAINTEXT")


def test_a_request_while_sasl_authenticate_is_awaited_is_answered_illegal_sasl_state_then_closed(secure_broker):
    """Once SaslHandshake v1 started an exchange, Kafka's SaslServerAuthenticator answers any
    request but SaslAuthenticate with that request's error response (ILLEGAL_SASL_STATE), then
    closes the connection; before the handshake it closes without an answer (above)."""
    for api_key, version, body, error_of in (
        (3, 1, {"topics": [{"name": "t"}]}, lambda answer: answer.topics[0].error_code),  # Metadata
        (16, 1, {}, lambda answer: answer.error_code),  # ListGroups
        (18, 3, {"client_software_name": "t", "client_software_version": "1"}, lambda answer: answer.error_code),
        (17, 1, {"mechanism": "PLAIN"}, lambda answer: answer.error_code),  # a second SaslHandshake
    ):
        with RawClient(secure_broker.bootstrap("SASL_PLAINTEXT"), "test") as raw:
            assert raw.request(17, 1, {"mechanism": "PLAIN"}).error_code == 0
            assert error_of(raw.request(api_key, version, body)) == 34, api_key  # ILLEGAL_SASL_STATE
            assert raw.closed_by_broker(), api_key
    wait_for_log(secure_broker, "answered ILLEGAL_SASL_STATE and closing connection from")


def test_plaintext_to_tls_and_tls_to_plaintext_are_closed_with_a_clear_line(secure_broker, pki):
    import ssl

    with RawClient(secure_broker.bootstrap("SSL"), "test") as raw:
        raw.send(raw.frame(18, 0, {}))
        answer = b""
        while chunk := raw.sock.recv(100):
            answer += chunk
        # closed without a Kafka answer: nothing (OpenSSL sends no alert for a record that is not
        # TLS at all) or at most a TLS alert record
        assert answer == b"" or answer[:2] == b"\x15\x03", answer
    wait_for_log(secure_broker, "is the client speaking plaintext to a TLS listener?")
    host, port = secure_broker.bootstrap("PLAINTEXT").split(":")
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        with pytest.raises((ssl.SSLError, OSError)):
            context.wrap_socket(sock, server_hostname="127.0.0.1")
    wait_for_log(secure_broker, "the client started a TLS handshake on a listener without TLS")
