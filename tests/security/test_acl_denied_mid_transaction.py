"""A transactional producer whose transactional id is denied WRITE in the middle of a transaction:
Kafka answers AddPartitionsToTxn with TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition,
and the client fails the transaction at once. A refusal without per-partition errors (what trafka
answered before) left aiokafka and confluent-kafka re-sending AddPartitionsToTxn until their
timeout, then failing with a timeout instead of the authorization error."""

from __future__ import annotations

import asyncio

import pytest
from testkit.acl import allow, confluent_admin, login, unique
from testkit.security import aiokafka_config, confluent_config


def _prepare(broker, prefix: str) -> None:
    from confluent_kafka.admin import NewTopic

    admin = confluent_admin(broker)
    for future in admin.create_topics([NewTopic(prefix + "-a", 1), NewTopic(prefix + "-b", 2)]).values():
        future.result(30)
    allow(admin, "User:alice", "TOPIC", prefix, "WRITE", pattern="PREFIXED")
    allow(admin, "User:alice", "TRANSACTIONAL_ID", prefix, "WRITE", pattern="PREFIXED")


def _deny(broker, prefix: str) -> None:
    allow(confluent_admin(broker), "User:alice", "TRANSACTIONAL_ID", prefix, "WRITE", pattern="PREFIXED",
          permission="DENY")


def test_confluent_kafka_fails_the_transaction_with_the_authorization_error(broker):
    from confluent_kafka import KafkaException, Producer

    prefix = unique("txn-deny-c")
    _prepare(broker, prefix)
    producer = Producer({"bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"), "transactional.id": prefix + "-id",
                         "transaction.timeout.ms": 60000, **confluent_config(login("alice"))})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(prefix + "-a", b"allowed")
    producer.flush(30)
    _deny(broker, prefix)
    producer.produce(prefix + "-b", b"denied", partition=1)  # a new partition: AddPartitionsToTxn
    with pytest.raises(KafkaException) as info:
        producer.commit_transaction(50)
    error = info.value.args[0]
    assert error.name() == "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", error


def test_aiokafka_fails_the_transaction_with_the_authorization_error(broker):
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import TransactionalIdAuthorizationFailed

    prefix = unique("txn-deny-a")
    _prepare(broker, prefix)

    async def run():
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap("SASL_PLAINTEXT"),
                                    transactional_id=prefix + "-id", **aiokafka_config(login("alice")))
        await producer.start()
        try:
            await producer.begin_transaction()
            await (await producer.send(prefix + "-a", b"allowed"))
            _deny(broker, prefix)
            with pytest.raises(TransactionalIdAuthorizationFailed):
                await asyncio.wait_for(await producer.send(prefix + "-b", b"denied", partition=1), 50)
        finally:
            await asyncio.wait_for(producer.stop(), 30)

    asyncio.run(run())
