"""aiokafka 0.14.0 (old, non-flexible versions only): metadata and offset lookups."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from testkit.drivers import TIMEOUT_S

pytestmark = pytest.mark.compat_client("aiokafka")


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT_S))


@pytest.mark.compat("metadata", "list-offsets")
def test_metadata_and_offsets(bootstrap, trafka_topic):
    async def scenario():
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        try:
            for i, ts in enumerate((1000, 2000, 3000)):
                assert (await producer.send_and_wait(trafka_topic, f"v{i}".encode(), timestamp_ms=ts)).offset == i
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
        await consumer.start()
        try:
            assert trafka_topic in await consumer.topics()
            tp = TopicPartition(trafka_topic, 0)
            assert (await consumer.beginning_offsets([tp]))[tp] == 0
            assert (await consumer.end_offsets([tp]))[tp] == 3
            found = await consumer.offsets_for_times({tp: 1500})
            assert (found[tp].offset, found[tp].timestamp) == (1, 2000)
            assert (await consumer.offsets_for_times({tp: 9999}))[tp] is None
        finally:
            await consumer.stop()

    run(scenario())
