"""kcat (Debian's, librdkafka 2.0.2) on every kind of listener of one broker: SASL_PLAINTEXT and
SASL_SSL with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (librdkafka's unsecured JWT
handler), SSL, and mTLS with the client certificate; wrong passwords, unknown users, a token without
sub and an mTLS login without a certificate are refused; kcat of the wrong protocol (plaintext to
TLS, TLS to plaintext) is disconnected with a clear broker log line."""

import shutil
import subprocess
import uuid

import pytest
from testkit.clients.kcat import kcat_options
from testkit.security import Auth, upsert_scram

from trafka.testing.waiting import wait_for_log

pytestmark = pytest.mark.skipif(shutil.which("kcat") is None,
                                reason="kcat is not installed (testkit/setup_deps.py)")

SCRAM = {"SCRAM-SHA-256": ("kcat256", "kcat-secret-256"), "SCRAM-SHA-512": ("kcat512", "kcat-secret-512")}


@pytest.fixture(scope="module")
def kcat_users(secure_broker):
    for mechanism, (user, password) in SCRAM.items():
        upsert_scram(secure_broker.bootstrap("PLAINTEXT"), user, password, mechanism)
    return SCRAM


def _options(pki, case: str) -> tuple[str, list[str]]:
    """case -> (listener, kcat options)."""
    s256, s512 = SCRAM["SCRAM-SHA-256"], SCRAM["SCRAM-SHA-512"]
    ca = pki.ca_pem
    no_sub = {"sasl_oauthbearer_config": "principalClaimName=user principal=kcat-nosub"}
    cases = {
        "SASL_PLAINTEXT-PLAIN": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret")),
        "SASL_PLAINTEXT-SCRAM-SHA-256": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "SCRAM-SHA-256", *s256)),
        "SASL_PLAINTEXT-SCRAM-SHA-512": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "SCRAM-SHA-512", *s512)),
        "SASL_PLAINTEXT-OAUTHBEARER": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "OAUTHBEARER", "kcat-oauth")),
        "SSL": ("SSL", Auth("SSL", ca=ca)),
        "SASL_SSL-PLAIN": ("SASL_SSL", Auth("SASL_SSL", "PLAIN", "bob", "bob-secret", ca=ca)),
        "SASL_SSL-SCRAM-SHA-256": ("SASL_SSL", Auth("SASL_SSL", "SCRAM-SHA-256", *s256, ca=ca)),
        "SASL_SSL-SCRAM-SHA-512": ("SASL_SSL", Auth("SASL_SSL", "SCRAM-SHA-512", *s512, ca=ca)),
        "SASL_SSL-OAUTHBEARER": ("SASL_SSL", Auth("SASL_SSL", "OAUTHBEARER", "kcat-oauth", ca=ca)),
        "MTLS": ("MTLS", Auth("SSL", ca=ca, cert=pki.client["cert.pem"], key=pki.client["key.pem"])),
        # refused
        "PLAIN-wrong-password": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "PLAIN", "alice", "wrong")),
        "PLAIN-unknown-user": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "PLAIN", "mallory", "alice-secret")),
        "SCRAM-SHA-256-wrong-password": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "SCRAM-SHA-256", "kcat256", "wrong")),
        "SCRAM-SHA-256-unknown-user": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "SCRAM-SHA-256", "nokcat", "x")),
        "SCRAM-SHA-512-wrong-password": ("SASL_SSL", Auth("SASL_SSL", "SCRAM-SHA-512", "kcat512", "wrong", ca=ca)),
        "SCRAM-SHA-512-unknown-user": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "SCRAM-SHA-512", "nokcat512", "x")),
        "OAUTHBEARER-no-sub": ("SASL_PLAINTEXT", Auth("SASL_PLAINTEXT", "OAUTHBEARER", "kcat-nosub"), no_sub),
        "MTLS-no-certificate": ("MTLS", Auth("SSL", ca=ca)),
    }
    listener, auth, *settings = cases[case]
    return listener, kcat_options(auth, **(settings[0] if settings else {}))


def _kcat_errors_until(bootstrap: str, options: list[str], text: bytes) -> bytes:
    """Run `kcat -L` until its stderr shows `text` (or it gives up, 15 s at most); its stderr.
    kcat would otherwise keep retrying for the whole metadata timeout."""
    process = subprocess.Popen([shutil.which("kcat"), "-b", bootstrap, *options, "-L", "-m", "15"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = b""
    try:
        for line in process.stderr:
            seen += line
            if text in line:
                break
    finally:
        process.kill()
        process.wait(timeout=30)
        process.stderr.close()
    return seen


def _kcat(bootstrap: str, options: list[str], *args: str, input: bytes | None = None):
    return subprocess.run([shutil.which("kcat"), "-b", bootstrap, *options, *args], input=input,
                          capture_output=True, timeout=60)


@pytest.mark.parametrize("case", ["SASL_PLAINTEXT-PLAIN", "SASL_PLAINTEXT-SCRAM-SHA-256", "SASL_PLAINTEXT-SCRAM-SHA-512",
                                  "SASL_PLAINTEXT-OAUTHBEARER", "SSL", "SASL_SSL-PLAIN", "SASL_SSL-SCRAM-SHA-256",
                                  "SASL_SSL-SCRAM-SHA-512", "SASL_SSL-OAUTHBEARER", "MTLS"])
def test_kcat_produce_and_consume(secure_broker, kcat_users, pki, case):
    listener, options = _options(pki, case)
    bootstrap = secure_broker.bootstrap(listener)
    topic = f"kcat-{uuid.uuid4().hex[:8]}"
    produced = _kcat(bootstrap, options, "-P", "-t", topic, input=b"hello-kcat\n")
    assert produced.returncode == 0, produced.stderr
    consumed = _kcat(bootstrap, options, "-C", "-t", topic, "-o", "beginning", "-c", "1", "-e")
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.strip() == b"hello-kcat"
    if "OAUTHBEARER" in case:
        assert "authenticated User:kcat-oauth from 127.0.0.1:" in secure_broker.log_text()


@pytest.mark.parametrize("case,client_says,broker_says", [
    ("PLAIN-wrong-password", "Authentication failed: Invalid username or password", "User:alice"),
    ("PLAIN-unknown-user", "Authentication failed: Invalid username or password", "User:mallory"),
    ("SCRAM-SHA-256-wrong-password", "invalid credentials with SASL mechanism SCRAM-SHA-256", "User:kcat256"),
    ("SCRAM-SHA-256-unknown-user", "invalid credentials with SASL mechanism SCRAM-SHA-256", "User:nokcat"),
    ("SCRAM-SHA-512-wrong-password", "invalid credentials with SASL mechanism SCRAM-SHA-512", "User:kcat512"),
    ("SCRAM-SHA-512-unknown-user", "invalid credentials with SASL mechanism SCRAM-SHA-512", "User:nokcat512"),
    ("OAUTHBEARER-no-sub", "the token has no sub claim", "an unnamed user"),
])
def test_kcat_refused_login(secure_broker, kcat_users, pki, case, client_says, broker_says):
    listener, options = _options(pki, case)
    errors = _kcat_errors_until(secure_broker.bootstrap(listener), options, client_says.encode())
    assert client_says.encode() in errors, errors
    wait_for_log(secure_broker, f"failed authentication of {broker_says} from 127.0.0.1:")


def test_kcat_mtls_without_a_certificate_is_refused(secure_broker, pki):
    listener, options = _options(pki, "MTLS-no-certificate")
    errors = _kcat_errors_until(secure_broker.bootstrap(listener), options, b"certificate required")
    assert b"certificate required" in errors, errors
    wait_for_log(secure_broker, "TLS handshake failed on listener MTLS")


@pytest.mark.parametrize("direction", ["plaintext-to-TLS", "TLS-to-plaintext"])
def test_kcat_of_the_wrong_protocol_is_disconnected_with_a_clear_line(secure_broker, pki, direction):
    if direction == "plaintext-to-TLS":
        listener, options, line = "SSL", [], "(is the client speaking plaintext to a TLS listener?)"
        says = b"Disconnected"
    else:
        listener, options = "PLAINTEXT", kcat_options(Auth("SSL", ca=pki.ca_pem))
        line, says = "the client started a TLS handshake on a listener without TLS", b"SSL handshake failed"
    before = secure_broker.log_text().count(line)
    errors = _kcat_errors_until(secure_broker.bootstrap(listener), options, says)
    assert says in errors, errors
    wait_for_log(secure_broker, line)
    assert secure_broker.log_text().count(line) > before
