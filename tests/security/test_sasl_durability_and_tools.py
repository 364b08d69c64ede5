"""SCRAM credentials survive a restart; OAUTHBEARER with unsecured JWTs (confluent-kafka). kcat on every
listener: test_kcat_security.py."""

import sys
import subprocess

import pytest
from testkit.security import Auth, confluent_login_errors, roundtrip_confluent, secure_config, upsert_scram

from trafka.testing import TrafkaBroker


def _describe_scram(bootstrap: str, users: list[str]) -> dict:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    return {user: future.result(30) for user, future in admin.describe_user_scram_credentials(users).items()}


def test_scram_credentials_survive_a_restart_and_are_never_stored_in_plaintext(pki, tmp_path):
    broker = TrafkaBroker(data_dir=tmp_path / "data", config=secure_config(pki))
    broker.start()
    try:
        upsert_scram(broker.bootstrap("PLAINTEXT"), "carol", "carol-secret-password", "SCRAM-SHA-512")
        broker.restart()
        described = _describe_scram(broker.bootstrap("PLAINTEXT"), ["carol"])
        assert [(info.mechanism.name, info.iterations) for info in described["carol"].scram_credential_infos] == [
            ("SCRAM_SHA_512", 4096)]
        auth = Auth("SASL_PLAINTEXT", "SCRAM-SHA-512", "carol", "carol-secret-password")
        assert roundtrip_confluent(broker.bootstrap("SASL_PLAINTEXT"), auth).startswith(b"sec-")
        stored = b"".join(p.read_bytes() for p in (tmp_path / "data" / "metadata").rglob("*.log"))
        assert b"carol" in stored and b"carol-secret-password" not in stored
    finally:
        broker.stop()


def test_oauthbearer_unsecured_jwt(secure_broker):
    auth = Auth("SASL_PLAINTEXT", "OAUTHBEARER", "token-user")
    assert roundtrip_confluent(secure_broker.bootstrap("SASL_PLAINTEXT"), auth).startswith(b"sec-")


def test_oauthbearer_invalid_token_refused(secure_broker):
    """A token without the principal claim the validator needs is refused."""
    auth = Auth("SASL_PLAINTEXT", "OAUTHBEARER", "nobody")
    errors = confluent_login_errors(secure_broker.bootstrap("SASL_PLAINTEXT"), auth, principal_claim="user")
    assert any("Authentication failed" in e or "invalid_token" in e for e in errors), errors


def test_acl_requests_answer_security_disabled(secure_broker):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient,
                                       ResourcePatternType, ResourceType)

    admin = AdminClient({"bootstrap.servers": secure_broker.bootstrap("PLAINTEXT")})
    binding = AclBinding(ResourceType.TOPIC, "t", ResourcePatternType.LITERAL, "User:alice", "*",
                         AclOperation.READ, AclPermissionType.ALLOW)
    for future in admin.create_acls([binding]).values():
        with pytest.raises(KafkaException, match="SECURITY_DISABLED"):
            future.result(30)


def test_an_unknown_authorizer_is_refused_at_start_with_one_line(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "trafka", "serve", "--port", "0", "--data-dir", str(tmp_path / "data"),
         "--config", "authorizer.class.name=com.example.MyAuthorizer"],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "StandardAuthorizer" in result.stderr and "Traceback" not in result.stderr
