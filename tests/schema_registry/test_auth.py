"""schema.registry.auth=basic: the registry asks for HTTP Basic credentials of one of the
broker's SASL users, a PLAIN user of sasl.jaas.config or a SCRAM user, checked against their
password; anything else is 401 with WWW-Authenticate."""

from __future__ import annotations

import base64
import urllib.error
import urllib.request

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from testkit.security import upsert_scram
from trafka.testing import TrafkaBroker

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" '
        'user_admin="admin-secret" user_alice="alice-secret";')


@pytest.fixture
def guarded(tmp_path):
    config = {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
              "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
              "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256", "sasl.jaas.config": JAAS,
              "schema.registry.auth": "basic"}
    with TrafkaBroker(data_dir=tmp_path / "data", config=config) as broker:
        yield broker


def status_of(url: str, header: str | None) -> tuple[int, str | None]:
    request = urllib.request.Request(url + "/subjects", headers={"Authorization": header} if header else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, None
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("WWW-Authenticate")


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_plain_and_scram_users_get_in_and_nobody_else(guarded):
    url = guarded.schema_registry_url.rstrip("/")
    upsert_scram(guarded.bootstrap("PLAINTEXT"), "bob", "bob-secret", "SCRAM-SHA-256")
    assert status_of(url, basic("alice", "alice-secret")) == (200, None)
    assert status_of(url, basic("bob", "bob-secret")) == (200, None)
    for header in (None, basic("alice", "wrong"), basic("bob", "alice-secret"), basic("nobody", "x"),
                   "Basic not-base64!", "Bearer abc"):
        status, challenge = status_of(url, header)
        assert (status, challenge) == (401, 'Basic realm="trafka schema registry"'), header
    client = SchemaRegistryClient({"url": url, "basic.auth.user.info": "alice:alice-secret"})
    schema_id = client.register_schema("guarded-value", Schema('{"type": "string"}', "AVRO"))
    assert client.get_schema(schema_id).schema_str == '{"type": "string"}'
    with pytest.raises(SchemaRegistryError) as refused:
        SchemaRegistryClient({"url": url, "basic.auth.user.info": "alice:nope"}).get_subjects()
    assert refused.value.http_status_code == 401
