"""Broker-side schema validation (Confluent Server's topic config
confluent.value.schema.validation, and .key.): a record must be framed with a schema id the
built-in registry holds, or the produce fails it with INVALID_RECORD and a clear message."""

from __future__ import annotations

from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

SCHEMA = '{"type":"record","name":"Ping","fields":[{"name":"n","type":"int"}]}'


def produce_each(bootstrap: str, topic: str, values: list) -> list:
    """Each value in its own batch; the delivery error code of each (None: delivered)."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "retries": 0})
    outcome = []
    for value in values:
        producer.produce(topic, value, on_delivery=lambda err, msg: outcome.append(err))
        producer.flush(15)
    return [e.code() if e else None for e in outcome]


def test_value_validation_refuses_unframed_and_unknown_ids(broker, registry):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    for future in admin.create_topics([NewTopic("checked", 1, config={"confluent.value.schema.validation": "true"}),
                                       NewTopic("free", 1)]).values():
        future.result(30)
    client = SchemaRegistryClient({"url": registry})
    framed = AvroSerializer(client, SCHEMA)({"n": 1}, SerializationContext("checked", MessageField.VALUE))
    unknown_id = b"\x00" + (4242).to_bytes(4, "big") + framed[5:]
    assert produce_each(broker.bootstrap_servers, "checked", [framed, b"plain text", unknown_id, None]) == [
        None, KafkaError.INVALID_RECORD, KafkaError.INVALID_RECORD, None]  # a tombstone passes
    assert produce_each(broker.bootstrap_servers, "free", [b"plain text"]) == [None]
    assert "Traceback" not in broker.log_text()


def test_the_refusal_names_the_record_and_the_reason(broker, registry):
    """On the wire: ProduceResponse's record_errors (KIP-467) say which record and why."""
    from trafka.testing.rawwire import RawClient
    from trafka.wire import records as rec

    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    for future in admin.create_topics([NewTopic("strict", 1, config={"confluent.key.schema.validation": "true"})]).values():
        future.result(30)
    batch = rec.encode_batch([rec.Record(b"not framed", b"v", (), 1_700_000_000_000),
                              rec.Record(None, b"w", (), 1_700_000_000_000)])
    with RawClient(broker.bootstrap_servers) as raw:
        answer = raw.request(0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": "strict", "partition_data": [{"index": 0, "records": batch}]}]})
    [partition] = answer.responses[0].partition_responses
    assert partition.error_code == KafkaError.INVALID_RECORD
    assert [(e.batch_index, "schema id" in e.batch_index_error_message) for e in partition.record_errors] == [(0, True)]
    assert "schema id" in partition.error_message
