"""DescribeConfigs on the wire, field by field against what Kafka answers (ConfigHelper):
which keys an empty list asks for, and the synonyms of a topic config."""

from __future__ import annotations

import pytest

from trafka.testing.rawwire import RawClient
from trafka.wire.errors import ErrorCode

TOPIC, BROKER = 2, 4


def described(raw: RawClient, resource_type: int, name: str, keys, *, version: int = 4, synonyms: bool = False) -> dict:
    body = {"resources": [{"resource_type": resource_type, "resource_name": name, "configuration_keys": keys}],
            "include_synonyms": synonyms, "include_documentation": False}
    [result] = raw.request(32, version, body).results
    assert result.error_code == ErrorCode.NONE, result.error_message
    return {c.name: c for c in result.configs}


def make_topic(raw: RawClient, name: str, configs: dict[str, str] | None = None) -> None:
    [topic] = raw.request(19, 5, {"topics": [{
        "name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [],
        "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}],
        "timeout_ms": 10000, "validate_only": False}).topics
    assert topic.error_code == ErrorCode.NONE, topic.error_message


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_an_empty_key_list_asks_for_every_config_as_null_does(trafka_session_broker, version):
    """Kafka's ConfigHelper lists every config for a null or an empty key list, in every version."""
    topic = f"every-{version}"
    with RawClient(trafka_session_broker.bootstrap_servers) as raw:
        make_topic(raw, topic)
        for resource_type, name in ((TOPIC, topic), (BROKER, "0")):
            every = described(raw, resource_type, name, None, version=version)
            assert len(every) > 10
            assert described(raw, resource_type, name, [], version=version).keys() == every.keys()
        assert described(raw, TOPIC, topic, ["retention.ms"], version=version).keys() == {"retention.ms"}
