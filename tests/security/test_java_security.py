"""Java kafka-clients 3.9.1 and 4.3.0 (py4j, testkit/java.py) on every kind of listener of one
broker: SASL_PLAINTEXT with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (Kafka's unsecured
login callback handler), SSL, SASL_SSL with each mechanism, and mTLS with an inline PEM keystore
and with a PKCS12 keystore made in the test. Wrong passwords, unknown users and a token without
its principal claim are refused with SaslAuthenticationException, an mTLS login without a client
certificate with SslAuthenticationException; a client of the wrong protocol is disconnected with a
clear broker log line. One JVM per version for the whole module."""

import uuid

import pytest
from testkit.security import upsert_scram

from testkit.java import KafkaJavaError, running_jvm
from trafka.testing.waiting import wait_for_log

P12_PASSWORD = "java-keystore-secret"
SCRAM = {"SCRAM-SHA-256": ("java256", "java-secret-256"), "SCRAM-SHA-512": ("java512", "java-secret-512")}
PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
UNSECURED_LOGIN = "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler"


@pytest.fixture(scope="module", params=["3.9.1", "4.3.0"])
def java(request):
    yield from running_jvm(request.param)


@pytest.fixture(scope="module")
def java_users(secure_broker):
    for mechanism, (user, password) in SCRAM.items():
        upsert_scram(secure_broker.bootstrap("PLAINTEXT"), user, password, mechanism)
    return SCRAM


@pytest.fixture(scope="module")
def java_keystore(pki):
    """A PKCS12 keystore (key + certificate + CA) with a password, for the mTLS listener."""
    return pki.issue("java-p12-client", password=P12_PASSWORD.encode())["keystore.p12"]


def _jaas(module: str, **options: str) -> str:
    return f"{module} required " + " ".join(f'{k}="{v}"' for k, v in options.items()) + ";"


def _sasl(protocol: str, mechanism: str, user: str, password: str) -> dict:
    module = PLAIN_MODULE if mechanism == "PLAIN" else SCRAM_MODULE
    return {"security.protocol": protocol, "sasl.mechanism": mechanism,
            "sasl.jaas.config": _jaas(module, username=user, password=password)}


def _oauth(protocol: str, principal: str, explicit_handler: bool, **claims: str) -> dict:
    props = {"security.protocol": protocol, "sasl.mechanism": "OAUTHBEARER",
             "sasl.jaas.config": _jaas(OAUTH_MODULE, **({"unsecuredLoginStringClaim_sub": principal} | claims))}
    if explicit_handler:  # the default of the clients; named once to show it is what is used
        props["sasl.login.callback.handler.class"] = UNSECURED_LOGIN
    return props


def _cases(pki, keystore) -> dict[str, tuple[str, dict]]:
    """case -> (listener, client properties)."""
    trust = {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem)}
    s256, s512 = SCRAM["SCRAM-SHA-256"], SCRAM["SCRAM-SHA-512"]
    return {
        "SASL_PLAINTEXT-PLAIN": ("SASL_PLAINTEXT", _sasl("SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret")),
        "SASL_PLAINTEXT-SCRAM-SHA-256": ("SASL_PLAINTEXT", _sasl("SASL_PLAINTEXT", "SCRAM-SHA-256", *s256)),
        "SASL_PLAINTEXT-SCRAM-SHA-512": ("SASL_PLAINTEXT", _sasl("SASL_PLAINTEXT", "SCRAM-SHA-512", *s512)),
        "SASL_PLAINTEXT-OAUTHBEARER": ("SASL_PLAINTEXT", _oauth("SASL_PLAINTEXT", "java-oauth", explicit_handler=False)),
        "SSL": ("SSL", {"security.protocol": "SSL", **trust}),
        "SASL_SSL-PLAIN": ("SASL_SSL", {**_sasl("SASL_SSL", "PLAIN", "bob", "bob-secret"), **trust}),
        "SASL_SSL-SCRAM-SHA-256": ("SASL_SSL", {**_sasl("SASL_SSL", "SCRAM-SHA-256", *s256), **trust}),
        "SASL_SSL-SCRAM-SHA-512": ("SASL_SSL", {**_sasl("SASL_SSL", "SCRAM-SHA-512", *s512), **trust}),
        "SASL_SSL-OAUTHBEARER": ("SASL_SSL", {**_oauth("SASL_SSL", "java-oauth", explicit_handler=True), **trust}),
        "MTLS-PEM": ("MTLS", {
            "security.protocol": "SSL", **trust, "ssl.keystore.type": "PEM",
            "ssl.keystore.certificate.chain": pki.client["cert.pem"].read_text(),
            "ssl.keystore.key": pki.client["key.pem"].read_text()}),
        "MTLS-PKCS12": ("MTLS", {
            "security.protocol": "SSL", **trust, "ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(keystore),
            "ssl.keystore.password": P12_PASSWORD, "ssl.key.password": P12_PASSWORD}),
    }


@pytest.mark.parametrize("case", ["SASL_PLAINTEXT-PLAIN", "SASL_PLAINTEXT-SCRAM-SHA-256", "SASL_PLAINTEXT-SCRAM-SHA-512",
                                  "SASL_PLAINTEXT-OAUTHBEARER", "SSL", "SASL_SSL-PLAIN", "SASL_SSL-SCRAM-SHA-256",
                                  "SASL_SSL-SCRAM-SHA-512", "SASL_SSL-OAUTHBEARER", "MTLS-PEM", "MTLS-PKCS12"])
def test_java_roundtrip(java, secure_broker, java_users, pki, java_keystore, case):
    listener, props = _cases(pki, java_keystore)[case]
    props = {"bootstrap.servers": secure_broker.bootstrap(listener), **props}
    topic = f"java-{uuid.uuid4().hex[:8]}"
    try:
        java.make_producer(props).send(topic, key=b"k", value=b"java-value")
        consumer = java.make_consumer({**props, "group.id": topic})
        consumer.assign([(topic, 0)])
        consumer.seekToBeginning()
        assert [r.value for r in consumer.poll_until(1, timeout_s=20)] == [b"java-value"]
    finally:
        java.close_clients()
    if "OAUTHBEARER" in case:
        assert f"authenticated User:java-oauth from 127.0.0.1:" in secure_broker.log_text()


def _refused(java, bootstrap: str, props: dict) -> KafkaJavaError:
    admin = java.make_admin({"bootstrap.servers": bootstrap, "request.timeout.ms": 10000,
                             "default.api.timeout.ms": 20000, **props})
    try:
        with pytest.raises(KafkaJavaError) as refused:
            admin.listTopics(timeout_s=30)
        return refused.value
    finally:
        java.close_clients()


@pytest.mark.parametrize("case,listener,props,message,principal", [
    ("PLAIN-wrong-password", "SASL_PLAINTEXT", _sasl("SASL_PLAINTEXT", "PLAIN", "alice", "wrong"),
     "Invalid username or password", "alice"),
    ("PLAIN-unknown-user", "SASL_PLAINTEXT", _sasl("SASL_PLAINTEXT", "PLAIN", "mallory", "alice-secret"),
     "Invalid username or password", "mallory"),
    ("SCRAM-SHA-256-wrong-password", "SASL_PLAINTEXT", _sasl("SASL_PLAINTEXT", "SCRAM-SHA-256", "java256", "wrong"),
     "invalid credentials with SASL mechanism SCRAM-SHA-256", "java256"),
    ("SCRAM-SHA-256-unknown-user", "SASL_PLAINTEXT", _sasl("SASL_PLAINTEXT", "SCRAM-SHA-256", "nobody256", "x"),
     "invalid credentials with SASL mechanism SCRAM-SHA-256", "nobody256"),
    ("SCRAM-SHA-512-wrong-password", "SASL_PLAINTEXT", _sasl("SASL_PLAINTEXT", "SCRAM-SHA-512", "java512", "wrong"),
     "invalid credentials with SASL mechanism SCRAM-SHA-512", "java512"),
    ("SCRAM-SHA-512-unknown-user", "SASL_PLAINTEXT", _sasl("SASL_PLAINTEXT", "SCRAM-SHA-512", "nobody512", "x"),
     "invalid credentials with SASL mechanism SCRAM-SHA-512", "nobody512"),
    ("SASL_SSL-PLAIN-wrong-password", "SASL_SSL", _sasl("SASL_SSL", "PLAIN", "bob", "wrong"),
     "Invalid username or password", "bob"),
    # the principal in a claim the validator does not read (it reads sub): no principal
    ("OAUTHBEARER-no-sub", "SASL_PLAINTEXT", {
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
        "sasl.jaas.config": _jaas(OAUTH_MODULE, unsecuredLoginStringClaim_user="java-nosub",
                                  unsecuredLoginPrincipalClaimName="user")},
     "the token has no sub claim", None),
    # the unsecured login handler takes a negative lifetime: a token whose exp has passed
    ("OAUTHBEARER-expired", "SASL_PLAINTEXT", {
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
        "sasl.jaas.config": _jaas(OAUTH_MODULE, unsecuredLoginStringClaim_sub="java-expired",
                                  unsecuredLoginLifetimeSeconds="-3600")},
     "the token has expired", "java-expired"),
])
def test_java_refused_login(java, secure_broker, java_users, pki, case, listener, props, message, principal):
    if listener == "SASL_SSL":
        props = {**props, "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem)}
    error = _refused(java, secure_broker.bootstrap(listener), props)
    assert error.simple_name == "SaslAuthenticationException", error
    assert message in (error.message or ""), error
    who = f"User:{principal}" if principal else "an unnamed user"
    wait_for_log(secure_broker, f"failed authentication of {who} from 127.0.0.1:")


def test_java_mtls_without_a_client_certificate_is_refused(java, secure_broker, pki):
    error = _refused(java, secure_broker.bootstrap("MTLS"), {
        "security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem)})
    assert error.simple_name == "SslAuthenticationException", error
    wait_for_log(secure_broker, "TLS handshake failed on listener MTLS")


@pytest.mark.parametrize("direction", ["plaintext-to-TLS", "TLS-to-plaintext"])
def test_java_of_the_wrong_protocol_is_disconnected_with_a_clear_line(java, secure_broker, pki, direction):
    if direction == "plaintext-to-TLS":
        listener, props, line = "SSL", {}, "(is the client speaking plaintext to a TLS listener?)"
    else:
        listener, line = "PLAINTEXT", "the client started a TLS handshake on a listener without TLS"
        props = {"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem)}
    before = secure_broker.log_text().count(line)
    admin = java.make_admin({"bootstrap.servers": secure_broker.bootstrap(listener), "request.timeout.ms": 3000,
                             "default.api.timeout.ms": 3000, **props})
    try:
        with pytest.raises(KafkaJavaError):  # no connection ever works: a timeout or an SSL failure
            admin.listTopics(timeout_s=10)
    finally:
        java.close_clients()
    wait_for_log(secure_broker, line)
    assert secure_broker.log_text().count(line) > before
