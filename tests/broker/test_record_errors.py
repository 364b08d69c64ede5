"""Per-record produce errors (KIP-467): a record without a key sent to a compacted topic is
named in ProduceResponse v8+ `record_errors` with its index in the batch and Kafka's message,
the partition is INVALID_RECORD with Kafka's summary message, and the Java producer fails exactly
that record with that text. Nothing of the refused batch is written. (librdkafka 2.16 reads the
field but fails every message of the batch with the generic INVALID_RECORD text.)"""

from __future__ import annotations

import pytest

from tests.broker.test_produce_fetch_wire import PRODUCE_V, create, produce_body
from trafka.testing.rawwire import RawClient
from testkit.java import KafkaJavaError, running_jvm
from trafka.wire import records

KAFKA_MESSAGE = "Compacted topic cannot accept message without key in topic partition {tp}."


def test_the_keyless_records_of_a_batch_are_named(trafka_broker):
    with RawClient(trafka_broker.bootstrap_servers, "record-errors") as client:
        assert create(client, "compacted-kip467", configs={"cleanup.policy": "compact"}).error_code == 0
        batch = records.encode_batch([records.Record(key=b"k0", value=b"a", timestamp=0),
                                      records.Record(key=None, value=b"b", timestamp=0),
                                      records.Record(key=b"k2", value=b"c", timestamp=0),
                                      records.Record(key=None, value=b"d", timestamp=0)])
        answer = client.request(0, PRODUCE_V, produce_body("compacted-kip467", batch))
        part = answer.responses[0].partition_responses[0]
        message = KAFKA_MESSAGE.format(tp="compacted-kip467-0")
        assert part.error_code == 87  # INVALID_RECORD
        assert [(e.batch_index, e.batch_index_error_message) for e in part.record_errors] == [(1, message), (3, message)]
        assert part.error_message == (
            "One or more records have been rejected due to 2 record errors in total, and only showing the first "
            f"three errors at most: [RecordError(batchIndex=1, message='{message}'), "
            f"RecordError(batchIndex=3, message='{message}')]")
        listed = client.request(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": "compacted-kip467", "partitions": [{"partition_index": 0, "timestamp": -1}]}]})
        assert listed.topics[0].partitions[0].offset == 0  # nothing written


@pytest.fixture(scope="module")
def java():
    yield from running_jvm("4.3.0")


def test_java_fails_exactly_the_keyless_record(trafka_broker, java):
    """Java's producer reads record_errors: the keyless record fails with Kafka's message, the
    others of its batch with the client's 'part of a batch which had invalid records'."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": trafka_broker.bootstrap_servers})
    for future in admin.create_topics([NewTopic("compacted-kip467-j", 1, config={"cleanup.policy": "compact"})]).values():
        future.result(30)
    producer = java.make_producer({"bootstrap.servers": trafka_broker.bootstrap_servers, "linger.ms": 500,
                                   "enable.idempotence": "false", "retries": 0})
    try:
        futures = [producer.send_async("compacted-kip467-j", key, value, partition=0)
                   for key, value in [(b"k0", b"a"), (None, b"b"), (b"k2", b"c")]]
        outcomes = []
        for future in futures:
            try:
                future.get(30)
                outcomes.append(None)
            except KafkaJavaError as exc:
                outcomes.append((exc.simple_name, exc.message))
    finally:
        producer.close()
    message = KAFKA_MESSAGE.format(tp="compacted-kip467-j-0")
    assert outcomes[1] == ("InvalidRecordException", message), outcomes
    sibling = ("KafkaException", "Failed to append record because it was part of a batch which had one more more "
               "invalid records")  # the Java client's own text, misspelling included
    assert outcomes[0] == outcomes[2] == sibling, outcomes
