"""Two static members (group.instance.id) started one after the other with aiokafka, whose
start() returns once the member has its assignment: by then the first member has already given
up the second one's share, as against Kafka.

The leader's SyncGroup completes the generation and answers every parked member at once. trafka
used to park the leader's own request too, so trio could send the newcomer's answer first and
aiokafka returned from the newcomer's start() while the first member still held every
partition (about half the time on a loaded machine). The leader's answer now goes out first
(trafka/broker/coordinators/group/classic.py, `_sync`)."""

from __future__ import annotations

import asyncio

import aiokafka
import pytest

from testkit.groups import create_topic
from trafka.testing import TrafkaBroker

ROUNDS = 6  # a single round caught the old ordering about half the time


@pytest.fixture
def broker(tmp_path):
    config = {"offsets.topic.num.partitions": 1, "group.initial.rebalance.delay.ms": 300}
    with TrafkaBroker(data_dir=tmp_path / "data", config=config, in_process=True) as running:
        yield running


async def _join_in_turn(bootstrap: str, group: str) -> tuple[set, set, set]:
    settings = dict(bootstrap_servers=bootstrap, group_id=group, session_timeout_ms=6000, heartbeat_interval_ms=500)
    first = aiokafka.AIOKafkaConsumer("shared", group_instance_id="first", **settings)
    await first.start()
    alone = {tp.partition for tp in first.assignment()}
    second = aiokafka.AIOKafkaConsumer("shared", group_instance_id="second", **settings)
    await second.start()
    # No await between here and the reads: what each consumer holds when second.start() returns.
    outcome = alone, {tp.partition for tp in first.assignment()}, {tp.partition for tp in second.assignment()}
    await second.stop()
    await first.stop()
    return outcome


def test_the_first_static_member_has_given_up_its_share_when_the_second_starts(broker):
    create_topic(broker.bootstrap_servers, "shared", 2)

    async def rounds():
        return [await _join_in_turn(broker.bootstrap_servers, f"in-turn-{n}") for n in range(ROUNDS)]

    for alone, first, second in asyncio.run(rounds()):
        assert alone == {0, 1}
        assert len(first) == len(second) == 1 and first | second == {0, 1}
