"""The Protobuf embedded format: records written over HTTP with a .proto schema (v3 and v2) are
read by confluent-kafka's ProtobufDeserializer, and records written by its ProtobufSerializer
(which registers a base64 FileDescriptorProto) are read back by a v2 consumer instance."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from tests.restproxy.test_v2 import V2, read_as
from tests.restproxy.test_v3_produce import consume_all

PROTO = """
syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";

message Order {
  string id = 1;
  repeated Line lines = 2;
  Status status = 3;
  map<string, int32> tags = 4;
  google.protobuf.Timestamp placed = 5;
  message Line { string sku = 1; int32 count = 2; }
}
enum Status { NEW = 0; PAID = 1; }
"""


def order_class():
    """shop.Order as a compiled class would be, built from its descriptor (as protoc's output)."""
    from google.protobuf import timestamp_pb2

    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
    proto = descriptor_pb2.FileDescriptorProto(name="shop.proto", package="shop", syntax="proto3",
                                               dependency=["google/protobuf/timestamp.proto"])
    order = proto.message_type.add(name="Order")
    line = order.nested_type.add(name="Line")
    line.field.add(name="sku", number=1, type=9, label=1, json_name="sku")
    line.field.add(name="count", number=2, type=5, label=1, json_name="count")
    entry = order.nested_type.add(name="TagsEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=9, label=1)
    entry.field.add(name="value", number=2, type=5, label=1)
    order.field.add(name="id", number=1, type=9, label=1)
    order.field.add(name="lines", number=2, type=11, label=3, type_name=".shop.Order.Line")
    order.field.add(name="status", number=3, type=14, label=1, type_name=".shop.Status")
    order.field.add(name="tags", number=4, type=11, label=3, type_name=".shop.Order.TagsEntry")
    order.field.add(name="placed", number=5, type=11, label=1, type_name=".google.protobuf.Timestamp")
    status = proto.enum_type.add(name="Status")
    status.value.add(name="NEW", number=0)
    status.value.add(name="PAID", number=1)
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order"))


ORDER = {"id": "o-1", "lines": [{"sku": "apple", "count": 3}], "status": "PAID", "tags": {"gift": 1},
         "placed": "2025-01-02T03:04:05Z"}


def test_proto_text_schema_over_v3_and_v2_read_by_confluent_kafka(proxy, broker):
    proxy.create_topic("orders")
    first = proxy.produce("orders", [{"value": {"type": "PROTOBUF", "schema": PROTO, "data": ORDER}}])[0]
    assert first["error_code"] == 200, first
    assert first["value"]["type"] == "PROTOBUF" and first["value"]["subject"] == "orders-value"
    schema_id = first["value"]["schema_id"]
    again = proxy.produce("orders", [{"value": {"schema_id": schema_id, "data": {"id": "o-2"}}}])[0]
    assert again["error_code"] == 200
    v2 = proxy.v2_produce("/topics/orders", "protobuf", {"value_schema_id": schema_id,
                                                         "records": [{"value": {"id": "o-3", "status": 1}}]})
    assert v2.status_code == 200 and v2.json()["value_schema_id"] == schema_id
    bad = proxy.produce("orders", [{"value": {"schema_id": schema_id, "data": {"id": 5, "nope": True}}}])[0]
    assert bad["error_code"] == 42203

    deserialize = ProtobufDeserializer(order_class(), {"use.deprecated.format": False})
    context = SerializationContext("orders", MessageField.VALUE)
    read = [deserialize(m.value(), context) for m in consume_all(broker, "orders", 3)]
    assert [(o.id, o.status, [(line.sku, line.count) for line in o.lines], dict(o.tags)) for o in read] == [
        ("o-1", 1, [("apple", 3)], {"gift": 1}), ("o-2", 0, [], {}), ("o-3", 1, [], {})]
    assert read[0].placed.seconds == 1735787045

    records = read_as(proxy, "proto-readers", "orders", "protobuf", 3)
    assert [r["value"] for r in records] == [ORDER, {"id": "o-2"}, {"id": "o-3", "status": "PAID"}]


def test_records_of_confluent_kafkas_serializer_read_by_a_v2_consumer(proxy, broker):
    proxy.create_topic("paid")
    registry = SchemaRegistryClient({"url": broker.schema_registry_url})
    cls = order_class()
    serialize = ProtobufSerializer(cls, registry, {"use.deprecated.format": False})
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for i in range(3):
        value = cls(id=f"p-{i}", status=1)
        value.lines.add(sku="pear", count=i)
        producer.produce("paid", value=serialize(value, SerializationContext("paid", MessageField.VALUE)))
    producer.flush(10)
    records = read_as(proxy, "paid-readers", "paid", "protobuf", 3)
    assert [r["value"] for r in records] == [
        {"id": f"p-{i}", "status": "PAID", "lines": [{"sku": "pear", **({"count": i} if i else {})}]} for i in range(3)]
    written = proxy.produce("paid", [{"value": {"type": "PROTOBUF", "data": {"id": "p-9"}}}])[0]
    assert written["error_code"] == 200 and written["value"]["subject"] == "paid-value"


@pytest.mark.parametrize("schema", ["syntax = \"proto3\"; message A { Missing m = 1; }",
                                    "syntax = \"proto3\"; import \"other.proto\"; message A { int32 x = 1; }"])
def test_unresolvable_proto_schemas_are_refused(proxy, schema):
    proxy.create_topic("broken")
    answer = proxy.produce("broken", [{"value": {"type": "PROTOBUF", "schema": schema, "data": {}}}])[0]
    assert answer["error_code"] in (42201, 42205), answer
    assert proxy.end_offsets("broken", 1) == [0]
    assert proxy.get("/topics", headers={"Accept": V2}).status_code == 200
