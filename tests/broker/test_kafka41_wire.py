"""The Kafka 4.1 versions and APIs of issue #13's band work, byte for byte: Fetch and Produce by
topic id, ListOffsets' newer special timestamps, OffsetForLeaderEpoch, UpdateFeatures and the
finalized features, client quotas, ListConfigResources and the delegation-token refusals."""

from __future__ import annotations

import time
import uuid

import pytest

from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient
from trafka.wire import records
from trafka.wire.errors import ErrorCode as E


def batch(*values: bytes) -> bytes:
    return records.encode_batch([records.Record(key=None, value=v, timestamp=int(time.time() * 1000)) for v in values])


@pytest.fixture
def broker(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", in_process=True) as running:
        yield running


@pytest.fixture
def client(broker):
    with RawClient(broker.bootstrap_servers, "kafka41") as c:
        yield c


def create(client, name: str, partitions: int = 1) -> uuid.UUID:
    body = client.request(19, 7, {
        "topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1, "assignments": [], "configs": []}],
        "timeout_ms": 5000, "validate_only": False,
    })
    assert body.topics[0].error_code == 0
    return body.topics[0].topic_id


def produce_by_id(client, topic_id, data: bytes, version: int = 13):
    return client.request(0, version, {
        "transactional_id": None, "acks": -1, "timeout_ms": 5000,
        "topic_data": [{"topic_id": topic_id, "partition_data": [{"index": 0, "records": data}]}],
    })


def fetch_by_id(client, topic_id, offset: int, version: int):
    return client.request(1, version, {
        "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
        "topics": [{"topic_id": topic_id, "partitions": [{"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}]}],
    })


# -- topic ids: Produce v13, Fetch v13-18 ------------------------------------------------------


@pytest.mark.parametrize("fetch_version", [13, 15, 16, 17, 18])
def test_produce_and_fetch_by_topic_id(client, fetch_version):
    topic_id = create(client, "by-id")
    produced = produce_by_id(client, topic_id, batch(b"one", b"two"))
    (topic,) = produced.responses
    assert topic.topic_id == topic_id
    assert (topic.partition_responses[0].error_code, topic.partition_responses[0].base_offset) == (E.NONE, 0)
    fetched = fetch_by_id(client, topic_id, 1, fetch_version)
    (answer,) = fetched.responses
    assert answer.topic_id == topic_id
    (partition,) = answer.partitions
    assert (partition.error_code, partition.high_watermark) == (E.NONE, 2)
    assert [r.value for r in records.decode_records(partition.records) if r.offset >= 1] == [b"two"]


def test_unknown_topic_id_is_unknown_topic_id(client):
    stranger = uuid.uuid4()
    produced = produce_by_id(client, stranger, batch(b"lost"))
    assert produced.responses[0].topic_id == stranger
    assert produced.responses[0].partition_responses[0].error_code == E.UNKNOWN_TOPIC_ID
    fetched = fetch_by_id(client, stranger, 0, 18)
    assert fetched.responses[0].topic_id == stranger
    assert fetched.responses[0].partitions[0].error_code == E.UNKNOWN_TOPIC_ID
    assert fetched.responses[0].partitions[0].records == b""


def test_produce_by_name_still_works_up_to_v12(client):
    create(client, "by-name")
    answer = client.request(0, 12, {
        "transactional_id": None, "acks": -1, "timeout_ms": 5000,
        "topic_data": [{"name": "by-name", "partition_data": [{"index": 0, "records": batch(b"x")}]}],
    })
    assert (answer.responses[0].name, answer.responses[0].partition_responses[0].error_code) == ("by-name", E.NONE)


# -- ListOffsets v8-10 -------------------------------------------------------------------------


def list_offset(client, topic: str, timestamp: int, version: int):
    body = client.request(2, version, {
        "replica_id": -1, "isolation_level": 0, "timeout_ms": 1000,
        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "timestamp": timestamp}]}],
    })
    return body.topics[0].partitions[0]


def test_list_offsets_earliest_local_and_latest_tiered(client):
    topic_id = create(client, "offsets")
    produce_by_id(client, topic_id, batch(b"a", b"b", b"c"))
    client.request(21, 2, {"topics": [{"name": "offsets", "partitions": [{"partition_index": 0, "offset": 1}]}], "timeout_ms": 5000})
    local = list_offset(client, "offsets", -4, 8)
    assert (local.error_code, local.offset) == (E.NONE, 1)  # no tiered storage: the local log is the log
    tiered = list_offset(client, "offsets", -5, 10)
    assert (tiered.error_code, tiered.offset, tiered.leader_epoch) == (E.NONE, -1, -1)  # nothing is tiered
    assert list_offset(client, "offsets", -5, 8).error_code == E.UNSUPPORTED_VERSION  # -5 needs v9
    assert list_offset(client, "offsets", -1, 10).offset == 3


# -- OffsetForLeaderEpoch ----------------------------------------------------------------------


def end_offset(client, topic: str, leader_epoch: int, *, current: int = -1, version: int = 4):
    body = client.request(23, version, {
        "replica_id": -1,
        "topics": [{"topic": topic, "partitions": [{"partition": 0, "current_leader_epoch": current, "leader_epoch": leader_epoch}]}],
    })
    return body.topics[0].partitions[0]


@pytest.mark.parametrize("version", [2, 3, 4])
def test_offset_for_leader_epoch_on_one_leader(client, version):
    topic_id = create(client, "epochs")
    produce_by_id(client, topic_id, batch(b"a", b"b"))
    zero = end_offset(client, "epochs", 0, version=version)
    assert (zero.error_code, zero.leader_epoch, zero.end_offset) == (E.NONE, 0, 2)
    later = end_offset(client, "epochs", 3, version=version)
    assert (later.error_code, later.leader_epoch, later.end_offset) == (E.NONE, -1, -1)
    assert end_offset(client, "epochs", 0, current=1, version=version).error_code == E.UNKNOWN_LEADER_EPOCH
    assert end_offset(client, "nowhere", 0, version=version).error_code == E.UNKNOWN_TOPIC_OR_PARTITION


# -- finalized features and UpdateFeatures -----------------------------------------------------


def features(client, version: int = 4):
    body = client.request(18, version, {"client_software_name": "t", "client_software_version": "1"})
    finalized = {f.name: f.max_version_level for f in body.finalized_features}
    return finalized, body.finalized_features_epoch


def update(client, updates: dict, *, version: int = 2, validate_only: bool = False):
    return client.request(57, version, {
        "timeout_ms": 5000, "validate_only": validate_only,
        "feature_updates": [
            {"feature": name, "max_version_level": level, "upgrade_type": kind, "allow_downgrade": kind != 1}
            for name, (level, kind) in updates.items()
        ],
    })


def test_feature_updates_are_checked_as_kafkas_controller_checks_them(client):
    finalized, epoch = features(client)
    assert finalized["metadata.version"] == 27
    refused = update(client, {"metadata.version": (26, 2)})
    assert refused.error_code == E.INVALID_UPDATE_VERSION
    assert "Refusing to perform the requested downgrade" in refused.error_message
    assert update(client, {"metadata.version": (26, 3)}).error_message == "Unsafe metadata.version downgrades are not supported."
    assert update(client, {"metadata.version": (28, 1)}).error_code == E.INVALID_UPDATE_VERSION  # beyond 4.1-IV1
    assert finalized["transaction.version"] == 2  # KIP-890 part 2, as a fresh Kafka 4.1
    assert update(client, {"transaction.version": (3, 1)}).error_code == E.INVALID_UPDATE_VERSION  # no TV3 in 4.1
    assert update(client, {"transaction.version": (1, 1)}).error_code == E.INVALID_UPDATE_VERSION  # a downgrade needs its type
    assert update(client, {"no.such.feature": (1, 1)}).error_code == E.INVALID_UPDATE_VERSION
    assert update(client, {"metadata.version": (27, 1)}).error_code == E.NONE  # already there: a no-op
    # v0-1 list one result per feature on success, none on failure.
    ok = update(client, {"metadata.version": (27, 1)}, version=1)
    assert [(r.feature, r.error_code) for r in ok.results] == [("metadata.version", E.NONE)]
    assert update(client, {"metadata.version": (5, 1)}, version=1).results == []
    assert features(client)[0]["metadata.version"] == 27


def test_group_version_downgrade_and_upgrade_survive_a_restart(broker, tmp_path):
    with RawClient(broker.bootstrap_servers) as client:
        finalized, epoch = features(client)
        if "group.version" not in finalized:
            pytest.skip("group.version is finalized only while ConsumerGroupHeartbeat is served")
        assert update(client, {"group.version": (0, 1)}).error_code == E.INVALID_UPDATE_VERSION  # a downgrade needs its type
        assert update(client, {"group.version": (0, 2)}, validate_only=True).error_code == E.NONE
        assert features(client) == (finalized, epoch)  # validate_only changed nothing
        assert update(client, {"group.version": (0, 2)}).error_code == E.NONE
        after, new_epoch = features(client)
        assert "group.version" not in after and new_epoch == epoch + 1
        assert update(client, {"group.version": (1, 2)}).error_code == E.INVALID_UPDATE_VERSION  # not a downgrade
    broker.restart()
    with RawClient(broker.bootstrap_servers) as client:
        assert features(client) == (after, new_epoch)
        assert update(client, {"group.version": (1, 1)}).error_code == E.NONE
        assert features(client) == (finalized, new_epoch + 1)


# -- client quotas -----------------------------------------------------------------------------


def alter_quotas(client, entries, validate_only=False):
    body = client.request(49, 1, {
        "validate_only": validate_only,
        "entries": [
            {"entity": [{"entity_type": t, "entity_name": n} for t, n in entity],
             "ops": [{"key": k, "value": v or 0.0, "remove": v is None} for k, v in ops.items()]}
            for entity, ops in entries
        ],
    })
    # one answer per entity, in the order of Kafka's results map: read back in the request's order
    by_entity = {frozenset((e.entity_type, e.entity_name) for e in entry.entity): (entry.error_code, entry.error_message)
                 for entry in body.entries}
    return [by_entity[frozenset(entity)] for entity, _ in entries]


def describe_quotas(client, components, strict=False):
    body = client.request(48, 1, {
        "strict": strict,
        "components": [{"entity_type": t, "match_type": m, "match": n} for t, m, n in components],
    })
    if body.error_code:
        return body.error_code, body.error_message
    return {
        tuple((e.entity_type, e.entity_name) for e in entry.entity): {v.key: v.value for v in entry["values"]}
        for entry in body.entries
    }


def test_client_quotas_are_stored_checked_filtered_and_durable(broker):
    alice, default_user = [("user", "alice")], [("user", None)]
    alice_app = [("user", "alice"), ("client-id", "app")]
    with RawClient(broker.bootstrap_servers) as client:
        assert alter_quotas(client, [
            (alice, {"producer_byte_rate": 1024.0, "request_percentage": 12.5}),
            (default_user, {"consumer_byte_rate": 2048.0}),
            (alice_app, {"producer_byte_rate": 512.0}),
            ([("ip", "10.0.0.1")], {"connection_creation_rate": 5.0}),
            ([("user", "bob")], {"producer_byte_rate": 1.5}),
            ([("user", "carol")], {"no_such_quota": 1.0}),
            ([("ip", "10.0.0.2"), ("user", "dave")], {"connection_creation_rate": 1.0}),
            ([("user", "erin")], {"consumer_byte_rate": -1.0}),
        ]) == [
            (E.NONE, None), (E.NONE, None), (E.NONE, None), (E.NONE, None),
            (E.INVALID_REQUEST, "producer_byte_rate cannot be a fractional value."),
            (E.INVALID_REQUEST, "Invalid configuration key no_such_quota"),
            (E.INVALID_REQUEST, "Invalid quota entity combination, IP entity should not be combined with User or ClientId"),
            (E.INVALID_REQUEST, "Quota consumer_byte_rate must be greater than 0"),
        ]
        assert alter_quotas(client, [([("user", "frank")], {"producer_byte_rate": 1.0})], validate_only=True) == [(E.NONE, None)]
        everything = describe_quotas(client, [])
        assert everything == {
            (("user", "alice"),): {"producer_byte_rate": 1024.0, "request_percentage": 12.5},
            (("user", None),): {"consumer_byte_rate": 2048.0},
            (("client-id", "app"), ("user", "alice")): {"producer_byte_rate": 512.0},
            (("ip", "10.0.0.1"),): {"connection_creation_rate": 5.0},
        }
        assert describe_quotas(client, [("user", 0, "alice")]) == {
            (("user", "alice"),): everything[(("user", "alice"),)],
            (("client-id", "app"), ("user", "alice")): everything[(("client-id", "app"), ("user", "alice"))],
        }
        assert list(describe_quotas(client, [("user", 0, "alice")], strict=True)) == [(("user", "alice"),)]
        assert list(describe_quotas(client, [("user", 1, None)])) == [(("user", None),)]
        assert describe_quotas(client, [("ip", 2, None), ("user", 2, None)])[0] == E.INVALID_REQUEST
        assert describe_quotas(client, [("group", 2, None)])[0] == E.UNSUPPORTED_VERSION
        assert alter_quotas(client, [(alice, {"request_percentage": None})]) == [(E.NONE, None)]
    broker.restart()
    with RawClient(broker.bootstrap_servers) as client:
        assert describe_quotas(client, [("user", 0, "alice")], strict=True) == {(("user", "alice"),): {"producer_byte_rate": 1024.0}}


def test_client_quotas_answer_in_kafkas_order(broker):
    """Kafka answers both quota APIs by walking java.util.HashMaps: AlterClientQuotas its results
    by entity, DescribeClientQuotas the metadata image's entities (rebuilt at each change, sized
    by the last image) and each entity's values. The orders below are what those maps give
    (checked against java.util.HashMap fed as Kafka's controller and image feed them), not the
    request's order nor sorted names."""
    def answered(body):
        return [tuple((e.entity_type, e.entity_name) for e in entry.entity) for entry in body.entries]

    def described(client):
        body = client.request(48, 1, {"strict": False, "components": []})
        return [(tuple((e.entity_type, e.entity_name) for e in entry.entity), [v.key for v in entry["values"]])
                for entry in body.entries]

    def entry(entity, ops):
        return {"entity": [{"entity_type": t, "entity_name": n} for t, n in entity],
                "ops": [{"key": k, "value": v or 0.0, "remove": v is None} for k, v in ops.items()]}

    alice, bob_app, any_client = [("user", "alice")], [("user", "bob"), ("client-id", "app")], [("client-id", None)]
    ip, any_user, carol = [("ip", "10.0.0.1")], [("user", None)], [("user", "carol")]
    with RawClient(broker.bootstrap_servers) as client:
        first = client.request(49, 1, {"validate_only": False, "entries": [
            entry(alice, {"producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0, "request_percentage": 50.0,
                          "controller_mutation_rate": 10.0}),
            entry(bob_app, {"consumer_byte_rate": 100.0}),
            entry(any_client, {"producer_byte_rate": 5000.0}),
            entry(ip, {"connection_creation_rate": 7.0}),
            entry(any_user, {"request_percentage": 20.0})]})
        assert {e.error_code for e in first.entries} == {E.NONE}
        assert answered(first) == [(("user", "alice"),), (("user", None),), (("client-id", None),),
                                   (("ip", "10.0.0.1"),), (("client-id", "app"), ("user", "bob"))]
        assert described(client) == [
            ((("user", None),), ["request_percentage"]),
            ((("user", "alice"),), ["producer_byte_rate", "consumer_byte_rate", "controller_mutation_rate", "request_percentage"]),
            ((("client-id", None),), ["producer_byte_rate"]),
            ((("ip", "10.0.0.1"),), ["connection_creation_rate"]),
            ((("client-id", "app"), ("user", "bob")), ["consumer_byte_rate"]),
        ]
        second = client.request(49, 1, {"validate_only": False, "entries": [
            entry(alice, {"consumer_byte_rate": None, "producer_byte_rate": 2048.0}),
            entry(carol, {"producer_byte_rate": 1.0, "consumer_byte_rate": 1.0}),
            entry(any_user, {"request_percentage": None})]})
        assert {e.error_code for e in second.entries} == {E.NONE}
        assert described(client) == [
            ((("user", "alice"),), ["controller_mutation_rate", "producer_byte_rate", "request_percentage"]),
            ((("client-id", None),), ["producer_byte_rate"]),
            ((("ip", "10.0.0.1"),), ["connection_creation_rate"]),
            ((("client-id", "app"), ("user", "bob")), ["consumer_byte_rate"]),
            ((("user", "carol"),), ["consumer_byte_rate", "producer_byte_rate"]),
        ]


# -- ListConfigResources and the delegation tokens --------------------------------------------


def test_list_config_resources(client):
    create(client, "configurable")
    v1 = client.request(74, 1, {"resource_types": []})
    listed = [(r.resource_type, r.resource_name) for r in v1.config_resources]
    assert listed[:2] == [(8, "0"), (4, "0")]  # this node as broker logger, then as broker
    assert (2, "configurable") in listed and (2, "__consumer_offsets") in listed
    only_topics = client.request(74, 1, {"resource_types": [2]})
    assert {r.resource_type for r in only_topics.config_resources} == {2}
    assert client.request(74, 1, {"resource_types": [2, 1]}).error_code == E.UNSUPPORTED_VERSION
    v0 = client.request(74, 0, {})
    assert (v0.error_code, list(v0.config_resources)) == (E.NONE, [])  # no client-metrics subscriptions


def test_delegation_tokens_are_not_allowed_on_plaintext(client):
    created = client.request(38, 3, {"owner_principal_type": None, "owner_principal_name": None, "renewers": [], "max_lifetime_ms": -1})
    assert (created.error_code, created.principal_type, created.principal_name) == (
        E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, "User", "ANONYMOUS")
    assert client.request(39, 2, {"hmac": b"x", "renew_period_ms": 1}).error_code == E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    assert client.request(40, 2, {"hmac": b"x", "expiry_time_period_ms": 1}).error_code == E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    described = client.request(41, 3, {"owners": None})
    assert (described.error_code, list(described.tokens)) == (E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, [])
