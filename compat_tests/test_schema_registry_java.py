"""The built-in schema registry with Confluent's Java serializers (kafka-avro-serializer and
kafka-schema-registry-client 7.0.16, shipped beside kafka-clients 4.3.0): a Java KafkaProducer
with KafkaAvroSerializer writes records that confluent-kafka's AvroDeserializer reads, and
records confluent-kafka's AvroSerializer wrote are read by KafkaAvroDeserializer; both sides see
one subject and one id."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from trafka.testing import TrafkaBroker

pytestmark = pytest.mark.compat_client("java-4.3.0")

SCHEMA = '{"type":"record","name":"Reading","namespace":"lab","fields":[{"name":"sensor","type":"string"},{"name":"value","type":"double"}]}'


def test_java_kafka_avro_serializer_and_python_deserializer_agree(java_client_43, tmp_path):
    k = java_client_43
    jvm = k.jvm
    if not hasattr(jvm.io.confluent.kafka.serializers, "KafkaAvroSerializer"):
        pytest.skip("Confluent's serializer jars are not on the classpath (python -m testkit.setup_deps)")
    with TrafkaBroker(data_dir=tmp_path / "data") as broker:
        url = broker.schema_registry_url.rstrip("/")
        producer = k.make_producer({"bootstrap.servers": broker.bootstrap_servers, "schema.registry.url": url,
                                    "key.serializer": "org.apache.kafka.common.serialization.StringSerializer",
                                    "value.serializer": "io.confluent.kafka.serializers.KafkaAvroSerializer"})
        schema = jvm.org.apache.avro.Schema.Parser().parse(SCHEMA)
        for i in range(3):
            record = jvm.org.apache.avro.generic.GenericData.Record(schema)
            record.put("sensor", f"s{i}")
            record.put("value", float(i) / 2)
            k.call(k.call(producer.j.send, jvm.org.apache.kafka.clients.producer.ProducerRecord("readings", f"k{i}", record)).get)
        producer.close()

        client = SchemaRegistryClient({"url": url})
        reader = AvroDeserializer(client)
        ctx = SerializationContext("readings", MessageField.VALUE)
        consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "py", "auto.offset.reset": "earliest"})
        consumer.subscribe(["readings"])
        values = []
        for _ in range(100):
            message = consumer.poll(0.3)
            if message is not None and message.error() is None:
                values.append(reader(message.value(), ctx))
            if len(values) == 3:
                break
        consumer.close()
        assert values == [{"sensor": f"s{i}", "value": i / 2} for i in range(3)]
        assert client.get_versions("readings-value") == [1]

        # and back: Python writes, Java reads, with the same id
        framed = AvroSerializer(client, SCHEMA)({"sensor": "py", "value": 9.5}, ctx)
        py_producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
        py_producer.produce("readings", framed)
        assert py_producer.flush(10) == 0
        deserializer = jvm.io.confluent.kafka.serializers.KafkaAvroDeserializer()
        conf = jvm.java.util.HashMap()
        conf.put("schema.registry.url", url)
        deserializer.configure(conf, False)
        assert k.call(deserializer.deserialize, "readings", framed).toString() == '{"sensor": "py", "value": 9.5}'
        assert client.get_versions("readings-value") == [1]
