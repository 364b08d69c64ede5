"""Produce one record / consume one record with each Python client, answering either what came
back or the Kafka error name the client reported (TOPIC_AUTHORIZATION_FAILED, ...). Each client's
functions live with its other adapters in testkit/clients/<client>.py."""

from __future__ import annotations

from testkit.clients.aiokafka import consume_aiokafka, produce_aiokafka
from testkit.clients.confluent import consume_confluent, produce_confluent
from testkit.clients.kafka_python import consume_kafka_python, produce_kafka_python

PRODUCERS = {"kafka-python": produce_kafka_python, "confluent-kafka": produce_confluent, "aiokafka": produce_aiokafka}
CONSUMERS = {"kafka-python": consume_kafka_python, "confluent-kafka": consume_confluent, "aiokafka": consume_aiokafka}
