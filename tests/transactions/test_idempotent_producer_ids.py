"""InitProducerId for idempotent producers (no transactional id): every call gets a producer id
of its own at epoch 0, whatever producer id and epoch it names, as Kafka's TransactionCoordinator
answers (an idempotent producer bumps its epoch client-side). trafka used to echo a named id
with epoch + 1, so @platformatic/kafka's producers, which all name (0, 0), shared producer id 0:
the second one's records were acknowledged and dropped as duplicates."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from testkit.kafka_python import stored_values
from trafka.testing.rawwire import RawClient
from trafka.wire import records
from trafka.wire.errors import ErrorCode as E

PRODUCERS = 200  # raw idempotent producers, all naming (0, 0)
BATCHES = 5  # each, of RECORDS records
RECORDS = 4


def init(raw: RawClient, producer_id: int, epoch: int, version: int = 3):
    return raw.request(22, version, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                     "producer_id": producer_id, "producer_epoch": epoch})


def create_topic(raw: RawClient, topic: str, partitions: int = 1) -> None:
    body = raw.request(19, 4, {"topics": [{"name": topic, "num_partitions": partitions, "replication_factor": 1,
                                           "assignments": [], "configs": []}],
                               "timeout_ms": 10000, "validate_only": False})
    assert body.topics[0].error_code == 0, body


def batch(pid: int, epoch: int, seq: int, values: list[bytes]) -> bytes:
    return records.encode_batch([records.Record(None, v, (), int(time.time() * 1000)) for v in values],
                                producer_id=pid, producer_epoch=epoch, base_sequence=seq)


def test_idempotent_producers_naming_the_same_id_each_get_their_own(trafka_broker):
    ids = []
    for _ in range(3):  # three connections, as three producers
        with RawClient(trafka_broker.bootstrap_servers) as raw:
            answer = init(raw, 0, 0)
            assert answer.error_code == E.NONE
            ids.append((answer.producer_id, answer.producer_epoch))
    assert len({pid for pid, _ in ids}) == 3, ids
    assert {epoch for _, epoch in ids} == {0}
    with RawClient(trafka_broker.bootstrap_servers) as raw:
        named = init(raw, ids[0][0], 7, version=4)  # its own id and an epoch: still a new id
        assert named.error_code == E.NONE and named.producer_epoch == 0
        assert named.producer_id not in {pid for pid, _ in ids}


@pytest.mark.parametrize("producer_id,epoch", [(-1, 0), (5, -1)])
def test_a_producer_id_without_an_epoch_is_an_invalid_request(trafka_broker, producer_id, epoch):
    # Kafka's KafkaApis: both -1, or both set.
    with RawClient(trafka_broker.bootstrap_servers) as raw:
        answer = init(raw, producer_id, epoch)
    assert (answer.error_code, answer.producer_id, answer.producer_epoch) == (E.INVALID_REQUEST, -1, -1)


def test_hundreds_of_idempotent_producers_lose_nothing(trafka_broker):
    """200 raw producers naming (0, 0) write interleaved batches to one partition; beside them,
    real idempotent producers of two clients. Every acknowledged record is stored once."""
    topic = f"pids-{uuid.uuid4().hex[:8]}"
    with RawClient(trafka_broker.bootstrap_servers) as raw:
        create_topic(raw, topic)
    acked: list[bytes] = []
    errors: list[str] = []

    def raw_producers(first: int, count: int) -> None:
        with RawClient(trafka_broker.bootstrap_servers) as raw:
            producers = []
            for _ in range(count):
                answer = init(raw, 0, 0)
                producers.append((answer.producer_id, answer.producer_epoch))
            for b in range(BATCHES):
                for i, (pid, epoch) in enumerate(producers):
                    values = [f"raw-{first + i}-{b}-{r}".encode() for r in range(RECORDS)]
                    body = raw.request(0, 7, {"transactional_id": None, "acks": -1, "timeout_ms": 10000,
                                              "topic_data": [{"name": topic, "partition_data": [
                                                  {"index": 0, "records": batch(pid, epoch, b * RECORDS, values)}]}]})
                    error = body.responses[0].partition_responses[0].error_code
                    if error == E.NONE:
                        acked.extend(values)
                    else:
                        errors.append(f"producer {first + i} batch {b}: error {error}")

    def confluent_producers(count: int) -> None:
        from confluent_kafka import Producer

        for n in range(count):
            producer = Producer({"bootstrap.servers": trafka_broker.bootstrap_servers, "enable.idempotence": True,
                                 "linger.ms": 2, "batch.num.messages": 50})
            values = [f"confluent-{n}-{r}".encode() for r in range(200)]

            def delivered(err, msg):
                if err is None:
                    acked.append(msg.value())
                else:
                    errors.append(f"confluent {n}: {err}")

            for v in values:
                producer.produce(topic, v, partition=0, on_delivery=delivered)
            producer.flush(30)

    def kafka_python_producers(count: int) -> None:
        from kafka import KafkaProducer

        for n in range(count):
            producer = KafkaProducer(bootstrap_servers=trafka_broker.bootstrap_servers, enable_idempotence=True,
                                     acks="all", linger_ms=2, batch_size=2048)
            futures = [(v, producer.send(topic, v, partition=0))
                       for v in (f"kafka-python-{n}-{r}".encode() for r in range(200))]
            producer.flush(30)
            for v, future in futures:
                try:
                    future.get(timeout=30)
                    acked.append(v)
                except Exception as exc:  # recorded, and the test fails below
                    errors.append(f"kafka-python {n}: {exc!r}")
            producer.close()

    threads = [threading.Thread(target=raw_producers, args=(k * 50, 50)) for k in range(PRODUCERS // 50)]
    threads += [threading.Thread(target=confluent_producers, args=(5,)),
                threading.Thread(target=kafka_python_producers, args=(5,))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:10]
    assert len(acked) == PRODUCERS * BATCHES * RECORDS + 10 * 200
    stored = stored_values(trafka_broker.bootstrap_servers, topic)
    assert sorted(stored) == sorted(acked)  # each acknowledged record stored once, nothing else
