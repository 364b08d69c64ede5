"""confluent-kafka's serializers against the registry built into the broker: AvroSerializer
registers the writer's schema and frames each value (magic 0, 4-byte id), AvroDeserializer
reads it back by id; a second version evolves compatibly; an incompatible one is refused with
409 and the registry's message; use.latest.version serializes with the subject's latest."""

from __future__ import annotations

import json

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

USER_V1 = """{"type": "record", "name": "User", "namespace": "app", "fields": [
  {"name": "name", "type": "string"}, {"name": "age", "type": "int"}]}"""
USER_V2 = """{"type": "record", "name": "User", "namespace": "app", "fields": [
  {"name": "name", "type": "string"}, {"name": "age", "type": "int"},
  {"name": "email", "type": ["null", "string"], "default": null}]}"""
USER_BAD = """{"type": "record", "name": "User", "namespace": "app", "fields": [
  {"name": "name", "type": "string"}, {"name": "age", "type": "int"}, {"name": "team", "type": "string"}]}"""


def consume(bootstrap: str, topic: str, count: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{topic}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got = []
    try:
        for _ in range(100):
            message = consumer.poll(0.3)
            if message is not None and message.error() is None:
                got.append(message.value())
            if len(got) >= count:
                break
    finally:
        consumer.close()
    return got


def test_avro_serializer_round_trip_and_schema_evolution(broker, registry):
    client = SchemaRegistryClient({"url": registry})
    bootstrap = broker.bootstrap_servers
    v1 = AvroSerializer(client, USER_V1)
    producer = Producer({"bootstrap.servers": bootstrap})
    ctx = SerializationContext("users", MessageField.VALUE)
    producer.produce("users", v1({"name": "ada", "age": 36}, ctx))
    v2 = AvroSerializer(client, USER_V2)
    producer.produce("users", v2({"name": "bob", "age": 41, "email": "bob@example.com"}, ctx))
    assert producer.flush(10) == 0

    raw = consume(bootstrap, "users", 2)
    assert [r[0] for r in raw] == [0, 0]  # Confluent framing: magic byte 0, then the schema id
    ids = [int.from_bytes(r[1:5], "big") for r in raw]
    assert ids[0] != ids[1]
    reader = AvroDeserializer(client)
    assert [reader(r, ctx) for r in raw] == [{"name": "ada", "age": 36},
                                             {"name": "bob", "age": 41, "email": "bob@example.com"}]
    assert client.get_subjects() == ["users-value"]
    assert client.get_versions("users-value") == [1, 2]
    latest = client.get_latest_version("users-value")
    assert (latest.version, latest.schema_id) == (2, ids[1])

    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema("users-value", Schema(USER_BAD, "AVRO"))
    assert refused.value.http_status_code == 409
    assert "incompatible" in refused.value.error_message
    # the same schema again: the same id, no new version
    assert client.register_schema("users-value", Schema(USER_V1, "AVRO")) == ids[0]
    assert client.get_versions("users-value") == [1, 2]


def test_use_latest_version_and_restart(broker, registry):
    client = SchemaRegistryClient({"url": registry})
    client.register_schema("events-value", Schema(USER_V1, "AVRO"))
    writer = AvroSerializer(client, None, conf={"auto.register.schemas": False, "use.latest.version": True})
    ctx = SerializationContext("events", MessageField.VALUE)
    framed = writer({"name": "cy", "age": 9}, ctx)
    schema_id = int.from_bytes(framed[1:5], "big")
    assert schema_id == client.get_latest_version("events-value").schema_id
    broker.restart(kill=True)
    again = SchemaRegistryClient({"url": broker.schema_registry_url.rstrip("/")})
    assert json.loads(again.get_schema(schema_id).schema_str) == json.loads(USER_V1)
    assert AvroDeserializer(again)(framed, ctx) == {"name": "cy", "age": 9}


def test_json_schema_serializer_round_trip(broker, registry):
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer

    schema = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "title": "Order", "type": "object",
                         "properties": {"id": {"type": "integer"}, "item": {"type": "string"}},
                         "required": ["id"]})
    client = SchemaRegistryClient({"url": registry})
    ctx = SerializationContext("orders", MessageField.VALUE)
    framed = JSONSerializer(schema, client)({"id": 7, "item": "tea"}, ctx)
    assert framed[0] == 0
    registered = client.get_latest_version("orders-value")
    assert (registered.schema.schema_type, int.from_bytes(framed[1:5], "big")) == ("JSON", registered.schema_id)
    assert JSONDeserializer(schema, schema_registry_client=client)(framed, ctx) == {"id": 7, "item": "tea"}


def test_protobuf_serializer_registers_the_schema_and_its_references(broker, registry):
    """ProtobufSerializer sends each file as a base64 FileDescriptorProto and registers the
    files it imports as references first (here OpenTelemetry's resource.proto and the
    common.proto it imports)."""
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource

    client = SchemaRegistryClient({"url": registry})
    ctx = SerializationContext("resources", MessageField.VALUE)
    serializer = ProtobufSerializer(Resource, client, {"use.deprecated.format": False})
    value = Resource(attributes=[KeyValue(key="service.name", value=AnyValue(string_value="shop"))])
    framed = serializer(value, ctx)
    assert framed[0] == 0
    latest = client.get_latest_version("resources-value")
    assert latest.schema.schema_type == "PROTOBUF"
    assert [r.subject for r in latest.schema.references] == ["opentelemetry/proto/common/v1/common.proto"]
    assert "opentelemetry/proto/common/v1/common.proto" in client.get_subjects()
    decoded = ProtobufDeserializer(Resource, {"use.deprecated.format": False})(framed, ctx)
    assert decoded == value
