"""OAUTHBEARER with unsecured JWTs: kafka-python (sasl_oauth_token_provider) and aiokafka
(AbstractTokenProvider) log in on SASL_PLAINTEXT and SASL_SSL; expired, wrongly signed, malformed
and subject-less tokens are refused with SASL_AUTHENTICATION_FAILED and a log line naming the
principal and the peer; a token that expires while its connection is open ends the session as
Kafka does (KIP-368; the session ends with the token or after connections.max.reauth.ms,
whichever is first): the next request other than a re-authentication closes the connection, and
re-authenticating with the expired token is refused. Broker time is moved with advance_clock, so
nothing sleeps past an exp. This module's broker is its own: moving its clock would expire the
tokens other modules' clients mint from the wall clock."""

from __future__ import annotations

import struct

import pytest
from testkit.oauth_tokens import TokenSource, broker_clock, claims_for, oauthbearer_message, unsecured_jwt
from testkit.security import (
    Auth, aiokafka_login_refused, kafka_python_config, kafka_python_login_refused, roundtrip_aiokafka,
    roundtrip_kafka_python,
)

from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_until

KEYSTORE_PASSWORD = "keystore-secret"
BROKER_JAAS = ('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
               'unsecuredLoginStringClaim_sub="admin";')
SASL_AUTHENTICATION_FAILED = 58
REAUTH_MS = 600_000
CLOSED = (ConnectionError, OSError, EOFError, struct.error, ValueError)


@pytest.fixture(scope="module")
def oauth_broker(pki, tmp_path_factory):
    broker = TrafkaBroker(data_dir=tmp_path_factory.mktemp("oauth") / "data", config={
        "listeners": "SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
        "sasl.enabled.mechanisms": "OAUTHBEARER",
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": pki.broker["keystore.p12"],
        "ssl.keystore.password": KEYSTORE_PASSWORD,
        "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": BROKER_JAAS,
        # sessions on SASL_PLAINTEXT end after 10 minutes or with their token, whichever is first
        "listener.name.sasl_plaintext.oauthbearer.connections.max.reauth.ms": REAUTH_MS,
        "listener.name.sasl_ssl.oauthbearer.sasl.jaas.config": BROKER_JAAS,
    })
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()
    assert "Traceback" not in broker.log_text()


def _auth(listener: str, pki, source: TokenSource) -> Auth:
    return Auth(listener, "OAUTHBEARER", source.principal, ca=pki.ca_pem if listener == "SASL_SSL" else None,
                token=source)


@pytest.mark.parametrize("listener", ["SASL_PLAINTEXT", "SASL_SSL"])
@pytest.mark.parametrize("client,roundtrip", [("kafka-python", roundtrip_kafka_python), ("aiokafka", roundtrip_aiokafka)])
def test_oauthbearer_roundtrip(oauth_broker, pki, listener, client, roundtrip):
    source = TokenSource(f"{client}-user", broker_clock(oauth_broker))
    assert roundtrip(oauth_broker.bootstrap(listener), _auth(listener, pki, source)).startswith(b"sec-")
    assert source.calls >= 1
    assert f"authenticated User:{client}-user from 127.0.0.1:" in oauth_broker.log_text()


def _bad_tokens(now_ms: int) -> dict[str, tuple[str, str | None, str]]:
    """name -> (token, the principal the log line names or None, the reason the broker gives)."""
    good = claims_for("alice", now_ms)
    return {
        "expired": (unsecured_jwt(claims_for("alice", now_ms - 7_200_000)), "User:alice", "the token has expired"),
        "alg-HS256": (unsecured_jwt(good, {"alg": "HS256", "typ": "JWT"}, signature="c2lnbmF0dXJl"), "User:alice",
                      "accepts only alg=none tokens, not alg='HS256'"),
        "two-parts": (unsecured_jwt(good).rsplit(".", 1)[0], None, "the token is not a JWT"),
        "payload-not-json": ("eyJhbGciOiJub25lIn0.bm90LWpzb24.", None, "not base64url-encoded JSON"),
        "no-sub": (unsecured_jwt({k: v for k, v in good.items() if k != "sub"}), None, "the token has no sub claim"),
        "no-exp": (unsecured_jwt({k: v for k, v in good.items() if k != "exp"}), "User:alice",
                   "the token has no numeric exp claim"),
    }


def _peer(raw: RawClient) -> str:
    host, port = raw.sock.getsockname()[:2]
    return f"{host}:{port}"


def _send_token(raw: RawClient, token: str):
    assert raw.request(17, 1, {"mechanism": "OAUTHBEARER"}).error_code == 0
    return raw.request(36, 2, {"auth_bytes": oauthbearer_message(token)})


@pytest.mark.parametrize("case", ["expired", "alg-HS256", "two-parts", "payload-not-json", "no-sub", "no-exp"])
def test_a_bad_token_is_refused_on_the_wire(oauth_broker, case):
    token, principal, reason = _bad_tokens(oauth_broker.clock()["time_ms"])[case]
    with RawClient(oauth_broker.bootstrap("SASL_PLAINTEXT")) as raw:
        peer = _peer(raw)
        challenge = _send_token(raw, token)
        # RFC 7628: an error challenge first; the client's %x01 then ends the exchange
        assert (challenge.error_code, bytes(challenge.auth_bytes)) == (0, b'{"status": "invalid_token"}')
        answer = raw.request(36, 2, {"auth_bytes": b"\x01"})
        assert answer.error_code == SASL_AUTHENTICATION_FAILED
        assert answer.error_message.startswith("Authentication failed: ") and reason in answer.error_message
        with pytest.raises(CLOSED):
            raw.request(3, 1, {"topics": []})
    line = f"failed authentication of {principal or 'an unnamed user'} from {peer} with OAUTHBEARER on listener SASL_PLAINTEXT: "
    lines = [entry for entry in oauth_broker.log_text().splitlines() if line in entry]
    assert len(lines) == 1 and reason in lines[0], lines


@pytest.mark.parametrize("case", ["expired", "alg-HS256", "no-sub"])
def test_kafka_python_with_a_bad_token_is_refused(oauth_broker, case, caplog):
    import logging

    token, principal, reason = _bad_tokens(oauth_broker.clock()["time_ms"])[case]
    before = oauth_broker.log_text().count(f"{reason}")
    source = TokenSource("alice", fixed=token)
    with caplog.at_level(logging.DEBUG, logger="kafka"):
        kafka_python_login_refused(oauth_broker.bootstrap("SASL_PLAINTEXT"), _auth("SASL_PLAINTEXT", None, source))
    # kafka-python answered the error challenge and got SASL_AUTHENTICATION_FAILED with the reason
    assert any("SaslAuthenticationFailed" in r.getMessage() and reason in r.getMessage() for r in caplog.records)
    log = oauth_broker.log_text()
    assert log.count(reason) > before
    assert f"failed authentication of {principal or 'an unnamed user'} from 127.0.0.1:" in log


@pytest.mark.parametrize("case", ["expired", "alg-HS256", "two-parts", "no-sub"])
def test_confluent_with_a_bad_token_from_oauth_cb_is_refused(oauth_broker, case):
    """confluent-kafka's oauth_cb hands librdkafka any token (librdkafka's own unsecured handler
    only makes good ones); the lifetime told to librdkafka is an hour, whatever the JWT says."""
    import time

    from confluent_kafka import Producer

    token, principal, reason = _bad_tokens(oauth_broker.clock()["time_ms"])[case]
    errors: list[str] = []
    producer = Producer({"bootstrap.servers": oauth_broker.bootstrap("SASL_PLAINTEXT"),
                         "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "OAUTHBEARER",
                         "oauth_cb": lambda config: (token, time.time() + 3600),
                         "error_cb": lambda error: errors.append(str(error))})
    wait_until(lambda: producer.poll(0.2) is not None and any(reason in e for e in errors), 15,
               lambda: f"librdkafka reporting {reason!r}; it reported {errors}")
    assert any("Authentication failed" in e and reason in e for e in errors), errors
    assert f"failed authentication of {principal or 'an unnamed user'} from 127.0.0.1:" in oauth_broker.log_text()


@pytest.mark.parametrize("case", ["expired", "alg-HS256", "no-sub"])
def test_aiokafka_with_a_bad_token_is_refused(oauth_broker, case):
    """aiokafka 0.14 does not answer the error challenge with %x01: it takes the login as done
    and sends Metadata, which the broker answers ILLEGAL_SASL_STATE before closing the connection
    (as Kafka does), with a line that names the refused principal and the reason; the client
    never gets a working connection."""
    token, principal, reason = _bad_tokens(oauth_broker.clock()["time_ms"])[case]
    before = oauth_broker.log_text().count(reason)
    aiokafka_login_refused(oauth_broker.bootstrap("SASL_PLAINTEXT"),
                           _auth("SASL_PLAINTEXT", None, TokenSource("alice", fixed=token)))
    log = oauth_broker.log_text()
    assert log.count(reason) > before
    assert f"failed authentication of {principal or 'an unnamed user'} from 127.0.0.1:" in log
    assert f"after the OAUTHBEARER credentials of {principal or 'an unnamed user'} were refused" in log


def _login(raw: RawClient, token: str):
    answer = _send_token(raw, token)
    assert answer.error_code == 0 and bytes(answer.auth_bytes) == b"", answer
    return answer


def test_a_token_that_expires_while_connected_ends_the_session(oauth_broker):
    now = oauth_broker.clock()["time_ms"]
    token = unsecured_jwt(claims_for("erin", now, lifetime_s=60))
    with RawClient(oauth_broker.bootstrap("SASL_PLAINTEXT")) as raw:
        peer = _peer(raw)
        answer = _login(raw, token)
        # the session lasts as long as the token (shorter than connections.max.reauth.ms here)
        assert 55_000 <= answer.session_lifetime_ms <= 60_000
        assert raw.request(3, 1, {"topics": []}).brokers
        oauth_broker.advance_clock(61_000)
        with pytest.raises(CLOSED):
            raw.request(3, 1, {"topics": []})
    log = oauth_broker.log_text()
    assert (f"closing connection from {peer}: session of User:erin expired (the OAUTHBEARER token's exp passed) "
            f"without re-authentication") in log


def test_connections_max_reauth_ms_ends_a_session_before_a_longer_token(oauth_broker):
    token = unsecured_jwt(claims_for("kate", oauth_broker.clock()["time_ms"], lifetime_s=3600))
    with RawClient(oauth_broker.bootstrap("SASL_PLAINTEXT")) as raw:
        peer = _peer(raw)
        assert _login(raw, token).session_lifetime_ms == REAUTH_MS
        oauth_broker.advance_clock(REAUTH_MS - 60_000)
        assert raw.request(3, 1, {"topics": []}).brokers
        oauth_broker.advance_clock(61_000)
        with pytest.raises(CLOSED):
            raw.request(3, 1, {"topics": []})
    assert (f"closing connection from {peer}: session of User:kate expired (connections.max.reauth.ms) "
            f"without re-authentication") in oauth_broker.log_text()


def test_re_authenticating_with_the_expired_token_is_refused(oauth_broker):
    token = unsecured_jwt(claims_for("frank", oauth_broker.clock()["time_ms"], lifetime_s=60))
    with RawClient(oauth_broker.bootstrap("SASL_PLAINTEXT")) as raw:
        peer = _peer(raw)
        _login(raw, token)
        oauth_broker.advance_clock(61_000)
        challenge = _send_token(raw, token)  # KIP-368 re-authentication, same token
        assert bytes(challenge.auth_bytes) == b'{"status": "invalid_token"}'
        answer = raw.request(36, 2, {"auth_bytes": b"\x01"})
        assert (answer.error_code, answer.error_message) == (SASL_AUTHENTICATION_FAILED,
                                                             "Authentication failed: the token has expired")
        with pytest.raises(CLOSED):
            raw.request(3, 1, {"topics": []})
    assert (f"failed authentication of User:frank from {peer} with OAUTHBEARER on listener SASL_PLAINTEXT: "
            f"the token has expired") in oauth_broker.log_text()


def test_re_authenticating_with_a_fresh_token_keeps_the_connection(oauth_broker):
    now = oauth_broker.clock()["time_ms"]
    with RawClient(oauth_broker.bootstrap("SASL_PLAINTEXT")) as raw:
        _login(raw, unsecured_jwt(claims_for("gina", now, lifetime_s=60)))
        oauth_broker.advance_clock(30_000)
        renewed = _login(raw, unsecured_jwt(claims_for("gina", now + 30_000, lifetime_s=3600)))
        assert renewed.session_lifetime_ms == REAUTH_MS  # connections.max.reauth.ms is the shorter now
        oauth_broker.advance_clock(60_000)  # past the first token's exp, not the second's
        assert raw.request(3, 1, {"topics": []}).brokers


def test_re_authenticating_as_another_principal_is_refused(oauth_broker):
    now = oauth_broker.clock()["time_ms"]
    with RawClient(oauth_broker.bootstrap("SASL_PLAINTEXT")) as raw:
        _login(raw, unsecured_jwt(claims_for("hugo", now)))
        answer = _send_token(raw, unsecured_jwt(claims_for("ivan", now)))
        assert answer.error_code == SASL_AUTHENTICATION_FAILED
        assert answer.error_message == "Cannot change principals during re-authentication from User:hugo to User:ivan"
        with pytest.raises(CLOSED):
            raw.request(3, 1, {"topics": []})


@pytest.mark.parametrize("client", ["kafka-python", "aiokafka"])
def test_a_client_whose_token_expired_logs_in_again_with_a_new_one(oauth_broker, client):
    """The broker closes the expired session at the client's next request; the client connects
    again and asks its provider for a new token."""
    source = TokenSource(f"renew-{client}", broker_clock(oauth_broker), lifetime_s=120)
    auth = _auth("SASL_PLAINTEXT", None, source)
    bootstrap = oauth_broker.bootstrap("SASL_PLAINTEXT")
    expired = f"session of User:renew-{client} expired (the OAUTHBEARER token's exp passed)"
    if client == "kafka-python":
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=bootstrap, **kafka_python_config(auth))
        try:
            producer.send("renew-topic", b"before").get(timeout=30)
            calls = source.calls
            oauth_broker.advance_clock(121_000)
            producer.send("renew-topic", b"after").get(timeout=30)
        finally:
            producer.close()
    else:
        import asyncio

        from aiokafka import AIOKafkaProducer
        from testkit.security import aiokafka_config

        async def run() -> int:
            producer = AIOKafkaProducer(bootstrap_servers=bootstrap, **aiokafka_config(auth))
            await producer.start()
            try:
                await producer.send_and_wait("renew-topic", b"before")
                calls = source.calls
                await asyncio.get_running_loop().run_in_executor(None, oauth_broker.advance_clock, 121_000)
                await producer.send_and_wait("renew-topic", b"after")
                return calls
            finally:
                await producer.stop()

        calls = asyncio.run(run())
    assert source.calls > calls  # a new token for the new connection
    assert expired in oauth_broker.log_text()


def test_an_unfinished_re_authentication_does_not_extend_an_expired_session(oauth_broker):
    """Starting a re-authentication (SaslHandshake) and then sending other requests is refused:
    otherwise an expired session could go on without ever presenting a valid token again. As in
    Kafka, the request is answered ILLEGAL_SASL_STATE and the connection then closed."""
    with RawClient(oauth_broker.bootstrap("SASL_PLAINTEXT")) as raw:
        peer = _peer(raw)
        _login(raw, unsecured_jwt(claims_for("jack", oauth_broker.clock()["time_ms"], lifetime_s=60)))
        oauth_broker.advance_clock(61_000)
        assert raw.request(17, 1, {"mechanism": "OAUTHBEARER"}).error_code == 0
        assert raw.request(3, 1, {"topics": [{"name": "t"}]}).topics[0].error_code == 34  # ILLEGAL_SASL_STATE
        assert raw.closed_by_broker()
    assert (f"answered ILLEGAL_SASL_STATE and closing connection from {peer}: request (API key 3) during the SASL "
            f"re-authentication of User:jack on listener SASL_PLAINTEXT") in oauth_broker.log_text()
