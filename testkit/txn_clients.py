"""Transactional producers and isolation-aware readers for every client of the matrix, behind
one small interface, so tests/transactions scenarios run unchanged over each client (each
client's classes live with its other adapters in testkit/clients/<client>.py).

`producer(request, name, bootstrap, transactional_id, **settings)` returns a `TxnProducer`:
init() begin() send(topic, value) flush() commit() abort()
send_offsets(topic, partition, offset, group) close(). A client-side failure raises
`TxnFailed(client, error name)`.

`read_values(request, name, bootstrap, topic, isolation, until=..., count=..., quiet_s=...)` reads
partition 0 from the beginning with isolation "read_committed" or "read_uncommitted" until the
value `until` arrives or `count` values did, or TIMEOUT_S passed (or, with quiet_s, that long
without a new value once one came); returns the values in order.
"""

from __future__ import annotations

from testkit.clients.aiokafka import AiokafkaTxn, read_values_aiokafka
from testkit.clients.base import TIMEOUT_S, TxnFailed
from testkit.clients.confluent import ConfluentTxn, read_values_confluent
from testkit.clients.java import JavaTxn, read_values_java
from testkit.clients.kafka_python import KafkaPythonTxn, read_values_kafka_python

__all__ = ["CLIENTS", "TIMEOUT_S", "TxnFailed", "committed_offset", "producer", "read_values"]

JAVA_FIXTURES = {"java-3.9.1": "java_client_39", "java-4.3.0": "java_client_43"}
CLIENTS = ["kafka-python", "confluent-kafka", "aiokafka", *JAVA_FIXTURES]


def producer(request, name: str, bootstrap: str, transactional_id: str, timeout_ms: int = 60000):
    if name == "kafka-python":
        made = KafkaPythonTxn(bootstrap, transactional_id, timeout_ms)
    elif name == "confluent-kafka":
        made = ConfluentTxn(bootstrap, transactional_id, timeout_ms)
    elif name == "aiokafka":
        made = AiokafkaTxn(bootstrap, transactional_id, timeout_ms)
    else:
        made = JavaTxn(request.getfixturevalue(JAVA_FIXTURES[name]), bootstrap, transactional_id, timeout_ms)
    request.addfinalizer(made.close)
    return made


def read_values(request, name: str, bootstrap: str, topic: str, isolation: str, *, until: bytes | None = None,
                count: int | None = None, quiet_s: float | None = None) -> list[bytes]:
    if name == "kafka-python":
        return read_values_kafka_python(bootstrap, topic, isolation, until, count, quiet_s)
    if name == "confluent-kafka":
        return read_values_confluent(bootstrap, topic, isolation, until, count, quiet_s)
    if name == "aiokafka":
        return read_values_aiokafka(bootstrap, topic, isolation, until, count, quiet_s)
    return read_values_java(request.getfixturevalue(JAVA_FIXTURES[name]), bootstrap, topic, isolation, until, count,
                            quiet_s)


def committed_offset(bootstrap: str, group: str, topic: str) -> int | None:
    """The group's committed offset of `topic`'s partition 0 (None when it has none), read
    with confluent-kafka."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        (got,) = consumer.committed([TopicPartition(topic, 0)], timeout=10)
    finally:
        consumer.close()
    return None if got.offset < 0 else got.offset
