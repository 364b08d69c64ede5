"""Produce one record / consume one record with each Python client, answering either what came
back or the Kafka error name the client reported (TOPIC_AUTHORIZATION_FAILED, ...)."""

from __future__ import annotations

import asyncio

from testkit.security import Auth, aiokafka_config, confluent_config, kafka_python_config


def _kafka_error_name(exc: Exception) -> str:
    """kafka-python's and aiokafka's errors carry Kafka's error name as `message`."""
    name = getattr(exc, "message", None)
    return name if isinstance(name, str) and name.isupper() else type(exc).__name__


# -- kafka-python -------------------------------------------------------------------------------

def produce_kafka_python(bootstrap: str, auth: Auth, topic: str, value: bytes) -> str | None:
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    producer = KafkaProducer(bootstrap_servers=bootstrap, max_block_ms=10000, **kafka_python_config(auth))
    try:
        producer.send(topic, value).get(timeout=30)
        return None
    except KafkaError as exc:
        return _kafka_error_name(exc)
    finally:
        producer.close(timeout=5)


def consume_kafka_python(bootstrap: str, auth: Auth, topic: str, group: str) -> bytes | str:
    from kafka import KafkaConsumer
    from kafka.errors import KafkaError

    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                             **kafka_python_config(auth))
    try:
        for _ in range(40):
            for records in consumer.poll(timeout_ms=500).values():
                return records[0].value
        return "NO_RECORD"
    except KafkaError as exc:
        return _kafka_error_name(exc)
    finally:
        consumer.close()


# -- confluent-kafka ----------------------------------------------------------------------------

def produce_confluent(bootstrap: str, auth: Auth, topic: str, value: bytes) -> str | None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 15000, **confluent_config(auth)})
    errors = []
    producer.produce(topic, value, on_delivery=lambda err, msg: errors.append(err))
    producer.flush(30)
    if not errors:
        return "NO_DELIVERY_REPORT"
    # (never compare a KafkaError with ==: its comparison with None leaves a Python error set)
    return None if errors[0] is None else errors[0].name()


def consume_confluent(bootstrap: str, auth: Auth, topic: str, group: str) -> bytes | str:
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                         **confluent_config(auth)})
    try:
        consumer.subscribe([topic])
        for _ in range(40):
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error():
                return message.error().name()
            return message.value()
        return "NO_RECORD"
    finally:
        consumer.close()


# -- aiokafka -----------------------------------------------------------------------------------

def produce_aiokafka(bootstrap: str, auth: Auth, topic: str, value: bytes) -> str | None:
    async def run():
        from aiokafka import AIOKafkaProducer
        from aiokafka.errors import KafkaError

        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=15000, **aiokafka_config(auth))
        await producer.start()
        try:
            await producer.send_and_wait(topic, value)
            return None
        except KafkaError as exc:
            return _kafka_error_name(exc)
        finally:
            await producer.stop()

    return asyncio.run(run())


def consume_aiokafka(bootstrap: str, auth: Auth, topic: str, group: str) -> bytes | str:
    async def run():
        from aiokafka import AIOKafkaConsumer
        from aiokafka.errors import KafkaError

        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                                    **aiokafka_config(auth))
        try:
            await consumer.start()
            for _ in range(40):
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    if records:
                        return records[0].value
            return "NO_RECORD"
        except KafkaError as exc:
            return _kafka_error_name(exc)
        finally:
            await consumer.stop()

    return asyncio.run(run())


PRODUCERS = {"kafka-python": produce_kafka_python, "confluent-kafka": produce_confluent, "aiokafka": produce_aiokafka}
CONSUMERS = {"kafka-python": consume_kafka_python, "confluent-kafka": consume_confluent, "aiokafka": consume_aiokafka}
