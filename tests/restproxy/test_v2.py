"""API v2 without the consumer instances: topics, partitions, offsets, brokers, produce in
every embedded format, content negotiation (406, 415) and Confluent's v2 error codes."""

from __future__ import annotations

import base64
import json

from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from tests.restproxy.conftest import read_back
from tests.restproxy.test_v3_produce import USER, consume_all

V2 = "application/vnd.kafka.v2+json"


def test_metadata(proxy, broker):
    proxy.create_topic("inventory", 2, configs=[{"name": "cleanup.policy", "value": "compact"}])
    listed = proxy.get("/topics")
    assert listed.status_code == 200 and listed.headers["content-type"] == V2
    assert "inventory" in listed.json()
    topic = proxy.get("/topics/inventory").json()
    assert topic["name"] == "inventory" and topic["configs"]["cleanup.policy"] == "compact"
    assert topic["partitions"] == [{"partition": p, "leader": 0, "replicas": [{"broker": 0, "leader": True, "in_sync": True}]}
                                   for p in (0, 1)]
    assert proxy.get("/topics/inventory/partitions").json() == topic["partitions"]
    assert proxy.get("/topics/inventory/partitions/1").json() == topic["partitions"][1]
    assert proxy.get("/brokers").json() == {"brokers": [0]}

    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for i in range(25):
        producer.produce("inventory", key=b"k", value=b"v%d" % i, partition=1)
    producer.flush(10)
    assert proxy.get("/topics/inventory/partitions/1/offsets").json() == {"beginning_offset": 0, "end_offset": 25}
    assert proxy.get("/topics/inventory/partitions/0/offsets").json() == {"beginning_offset": 0, "end_offset": 0}

    assert proxy.get("/topics/nope").status_code == 404
    assert proxy.get("/topics/nope").json()["error_code"] == 40403
    missing = proxy.get("/topics/inventory/partitions/5")
    assert missing.status_code == 404 and missing.json() == {"error_code": 40402, "message": "Partition not found."}
    assert proxy.get("/topics/inventory/partitions/5/offsets").json()["error_code"] == 40402


def test_content_negotiation(proxy):
    proxy.create_topic("negotiated")
    for accept in ("application/vnd.kafka.v2+json", "application/vnd.kafka+json", "application/json", "*/*",
                   "text/html, application/json;q=0.5"):
        assert proxy.get("/topics", headers={"Accept": accept}).status_code == 200, accept
    for accept in ("text/html", "application/xml", "application/vnd.kafka.v2+json;q=0"):
        refused = proxy.get("/topics", headers={"Accept": accept})
        assert refused.status_code == 406 and refused.headers["content-type"] == V2, accept
        assert refused.json() == {"error_code": 406, "message": "HTTP 406 Not Acceptable"}
    body = {"records": [{"value": "aGk="}]}
    for content_type in ("application/json", "text/plain",
                         "application/vnd.kafka.nope.v2+json"):
        refused = proxy.post("/topics/negotiated", data=json.dumps(body), headers={"Content-Type": content_type})
        assert refused.status_code == 415 and refused.json()["error_code"] == 415, content_type
    assert proxy.end_offsets("negotiated", 1) == [0]


def test_produce_binary_and_json_in_many_requests(proxy, broker):
    proxy.create_topic("v2-binary", 3)
    proxy.create_topic("v2-json", 3)
    sent_binary, sent_json = {}, {}
    for round_ in range(15):
        records = [{"key": base64.b64encode(b"k%d" % (i % 11)).decode(), "value": base64.b64encode(b"%d-%d" % (round_, i)).decode()}
                   for i in range(100)]
        answer = proxy.v2_produce("/topics/v2-binary", "binary", {"records": records})
        assert answer.status_code == 200 and answer.headers["content-type"] == V2
        body = answer.json()
        assert body["key_schema_id"] is None and body["value_schema_id"] is None
        for r, o in zip(records, body["offsets"]):
            assert o["error_code"] is None and o["error"] is None
            sent_binary[(o["partition"], o["offset"])] = (base64.b64decode(r["key"]), base64.b64decode(r["value"]))
        values = [{"value": {"round": round_, "i": i, "tags": ["a", None]}, "partition": i % 3} for i in range(100)]
        offsets = proxy.v2_produce("/topics/v2-json", "json", {"records": values}).json()["offsets"]
        for r, o in zip(values, offsets):
            assert o["partition"] == r["partition"]
            sent_json[(o["partition"], o["offset"])] = r["value"]
    read = read_back(broker.bootstrap_servers, "v2-binary", len(sent_binary))
    assert {(m.partition, m.offset): (m.key, m.value) for m in read} == sent_binary
    read = read_back(broker.bootstrap_servers, "v2-json", len(sent_json))
    assert {(m.partition, m.offset): json.loads(m.value) for m in read} == sent_json

    to_partition = proxy.v2_produce("/topics/v2-json/partitions/2", "json", {"records": [{"value": 1}, {"value": 2}]})
    assert [o["partition"] for o in to_partition.json()["offsets"]] == [2, 2]


def test_produce_avro_and_jsonschema(proxy, broker):
    proxy.create_topic("v2-users")
    first = proxy.v2_produce("/topics/v2-users", "avro", {"value_schema": USER, "records": [
        {"value": {"name": "ann", "age": {"int": 3}}}, {"value": {"name": "bob", "age": None}}]})
    assert first.status_code == 200, first.text
    schema_id = first.json()["value_schema_id"]
    assert first.json()["key_schema_id"] is None and isinstance(schema_id, int)
    again = proxy.v2_produce("/topics/v2-users", "avro", {"value_schema_id": schema_id, "records": [
        {"value": {"name": "cy", "age": 4}}]})
    assert again.json()["value_schema_id"] == schema_id
    registry = SchemaRegistryClient({"url": broker.schema_registry_url})
    avro = AvroDeserializer(registry)
    values = [avro(m.value(), SerializationContext("v2-users", MessageField.VALUE)) for m in consume_all(broker, "v2-users", 3)]
    assert values == [{"name": "ann", "age": 3}, {"name": "bob", "age": None}, {"name": "cy", "age": 4}]

    proxy.create_topic("v2-docs")
    schema = json.dumps({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]})
    ok = proxy.v2_produce("/topics/v2-docs", "jsonschema", {"value_schema": schema, "key_schema": '{"type": "string"}',
                                                            "records": [{"key": "a", "value": {"id": 1}}]})
    assert ok.status_code == 200 and ok.json()["key_schema_id"] is not None
    bad = proxy.v2_produce("/topics/v2-docs", "jsonschema", {"value_schema": schema, "records": [{"value": {"id": "x"}}]})
    assert bad.status_code == 422 and bad.json()["error_code"] == 42203
    assert proxy.end_offsets("v2-docs", 1) == [1]


def test_produce_errors_write_nothing(proxy):
    proxy.create_topic("v2-strict", 2)
    cases = [
        ("/topics/v2-missing", "binary", {"records": [{"value": "aGk="}]}, 404, 40401),
        ("/topics/v2-strict/partitions/9", "binary", {"records": [{"value": "aGk="}]}, 404, 40402),
        ("/topics/v2-strict", "binary", {"records": [{"value": "aGk=", "partition": 4}]}, 404, 40402),
        ("/topics/v2-strict", "avro", {"records": [{"key": 1, "value": {"a": 1}}], "value_schema": '"int"'}, 422, 42201),
        ("/topics/v2-strict", "avro", {"records": [{"value": 1}]}, 422, 42202),
        ("/topics/v2-strict", "avro", {"value_schema": "{not a schema", "records": [{"value": 1}]}, 422, 42201),
        ("/topics/v2-strict", "avro", {"value_schema": '"int"', "records": [{"value": "one"}]}, 422, 42203),
        ("/topics/v2-strict", "avro", {"value_schema_id": 999, "records": [{"value": 1}]}, 404, 40403),
        ("/topics/v2-strict", "binary", {"records": [{"value": "not base64!"}]}, 422, 42201),
        ("/topics/v2-strict", "binary", {"records": []}, 422, 422),
        ("/topics/v2-strict", "binary", {"nothing": 1}, 422, 422),
    ]
    for path, fmt, body, status, code in cases:
        answer = proxy.v2_produce(path, fmt, body)
        assert answer.status_code == status, (path, body, answer.text)
        assert answer.json()["error_code"] == code, (body, answer.text)
    malformed = proxy.post("/topics/v2-strict", data="{\"records\": [", headers={"Content-Type": "application/vnd.kafka.json.v2+json"})
    assert malformed.status_code == 400 and malformed.headers["content-type"] == V2
    assert proxy.end_offsets("v2-strict", 2) == [0, 0]


def read_as(proxy, group: str, topic: str, fmt: str, count: int) -> list:
    """Records of `topic` read by a v2 consumer instance of embedded format `fmt`."""
    created = proxy.post(f"/consumers/{group}", json={"format": fmt, "auto.offset.reset": "earliest"},
                         headers={"Content-Type": V2})
    assert created.status_code == 200, created.text
    instance = created.json()["base_uri"].split(proxy.url, 1)[1]
    assert proxy.post(f"{instance}/subscription", json={"topics": [topic]},
                      headers={"Content-Type": V2}).status_code == 204
    records = []
    for _ in range(40):
        answer = proxy.get(f"{instance}/records", headers={"Accept": f"application/vnd.kafka.{fmt}.v2+json"})
        assert answer.status_code == 200, answer.text
        records += answer.json()
        if len(records) >= count:
            break
    proxy.delete(instance, headers={"Content-Type": V2})
    return records


def test_avro_written_by_confluent_serializers_read_by_a_v2_consumer(proxy, broker):
    from confluent_kafka.schema_registry.avro import AvroSerializer

    proxy.create_topic("mixed-users")
    registry = SchemaRegistryClient({"url": broker.schema_registry_url})
    serialize = AvroSerializer(registry, USER)
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for name, age in (("ann", 1), ("bob", None)):
        producer.produce("mixed-users", value=serialize({"name": name, "age": age},
                                                        SerializationContext("mixed-users", MessageField.VALUE)))
    producer.flush(10)
    assert proxy.produce("mixed-users", [{"value": {"type": "AVRO", "data": {"name": "cy", "age": {"int": 3}}}}])[0]["error_code"] == 200
    records = read_as(proxy, "avro-readers", "mixed-users", "avro", 3)
    assert [(r["offset"], r["key"], r["value"]) for r in records] == [
        (0, None, {"name": "ann", "age": {"int": 1}}), (1, None, {"name": "bob", "age": None}),
        (2, None, {"name": "cy", "age": {"int": 3}})]  # Avro's JSON encoding: unions wrapped, as Confluent's
    binary = read_as(proxy, "binary-readers", "mixed-users", "binary", 3)
    assert [base64.b64decode(r["value"])[:1] for r in binary] == [b"\0"] * 3
