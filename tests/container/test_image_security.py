"""The container image run as docs/security.md ("Docker") says: a Kafka-style properties file
and a PKCS12 keystore in the container, `trafka serve --config-file`, a SASL_PLAINTEXT listener
on $TRAFKA_PORT for the health check and a SASL_SSL one; SCRAM credentials made through the
container survive a new container on the same volume. Certificates are made in the test."""

from __future__ import annotations

import os
import socket

import pytest

from testkit.security import Auth, roundtrip_kafka_python, upsert_scram
from testkit.tls import make_pki

pytestmark = [pytest.mark.container, pytest.mark.timeout(1500)]

KEYSTORE_PASSWORD = "changeit"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_image_with_sasl_and_tls_from_a_properties_file(trafka_image, run_image, tmp_path):
    # run_image binds tmp_path/"volume" at /var/lib/trafka; the secrets go in a directory of it
    # that is not a partition directory, which the broker leaves alone
    secrets = tmp_path / "volume" / "secrets"
    pki = make_pki(secrets)
    keystore = pki.issue("broker", server=True, password=KEYSTORE_PASSWORD.encode())["keystore.p12"]
    plain_port, tls_port = _free_port(), _free_port()
    (secrets / "server.properties").write_text(
        f"listeners=SASL_PLAINTEXT://127.0.0.1:{plain_port},SASL_SSL://127.0.0.1:{tls_port}\n"
        f"ssl.keystore.location=/var/lib/trafka/secrets/{keystore.name}\n"
        f"ssl.keystore.password={KEYSTORE_PASSWORD}\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'user_admin="admin-secret";\n')
    for path in [secrets, *secrets.iterdir()]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)  # readable by the image's user
    config = trafka_image["config"]
    cmd = config["Cmd"]
    config["Cmd"] = ["sh", "-c", "exec trafka serve --data-dir /var/lib/trafka "
                                 "--config-file /var/lib/trafka/secrets/server.properties"]
    admin = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN", "sasl.username": "admin",
             "sasl.password": "admin-secret"}
    scram = Auth("SASL_SSL", "SCRAM-SHA-512", "alice", "alice-secret", ca=pki.ca_pem)
    try:
        container = run_image({"TRAFKA_PORT": str(plain_port)})
        # the image's HEALTHCHECK (ApiVersions on $TRAFKA_PORT) needs no login on SASL_PLAINTEXT
        assert container.healthcheck().returncode == 0
        upsert_scram(f"127.0.0.1:{plain_port}", "alice", "alice-secret", "SCRAM-SHA-512", **admin)
        assert roundtrip_kafka_python(f"127.0.0.1:{tls_port}", scram).startswith(b"sec-")
        assert container.stop() == 0
        assert (tmp_path / "volume" / "metadata" / "__cluster_metadata-0").is_dir()  # the credentials are in it
        container = run_image({"TRAFKA_PORT": str(plain_port)})  # a new container, same volume
        assert roundtrip_kafka_python(f"127.0.0.1:{tls_port}", scram).startswith(b"sec-")
        assert container.stop() == 0
    finally:
        config["Cmd"] = cmd
    assert "Traceback" not in "".join(container.output)
