"""Committed offsets: kept in __consumer_offsets, through restarts, as each client expects.
Each scenario runs with kafka-python, confluent-kafka and aiokafka consumers; a kafka-python
admin client reads the committed offsets back as an outside observer."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient, TopicPartition

from trafka.testing.waiting import wait_until
from testkit.groups import CLIENTS, PolledConsumer, create_topic, open_consumer, produce

# auto.offset.reset=none: kafka-python and aiokafka raise NoOffsetForPartitionError from
# poll; librdkafka spells it 'error' and reports a KafkaError _AUTO_OFFSET_RESET.


def _committed(bootstrap: str, group: str, admin: KafkaAdminClient | None = None) -> dict[TopicPartition, tuple[int, str]]:
    client = admin or KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return {tp: (meta.offset, meta.metadata) for tp, meta in client.list_group_offsets([group])[group].items()}
    finally:
        if admin is None:
            client.close()


@pytest.mark.parametrize("client", CLIENTS)
def test_restarted_consumer_resumes_at_its_commit_and_catches_up_across_a_broker_restart(broker, client):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "log", 1)
    produce(bootstrap, "log", [f"a{i}" for i in range(100)])
    consumer = open_consumer(client, bootstrap, "log", "resumer")
    read = consumer.consume(40)
    # Commit exactly after the 40th record: the committed offset is the next one to read.
    consumer.commit({0: 40})
    consumer.close()
    assert read == [f"a{i}" for i in range(40)]

    produce(bootstrap, "log", [f"b{i}" for i in range(50)])  # written while the consumer is down
    broker.restart()
    assert _committed(bootstrap, "resumer") == {TopicPartition("log", 0): (40, "")}

    consumer = open_consumer(client, bootstrap, "log", "resumer")
    rest = consumer.consume(110)
    consumer.close()
    assert rest == [f"a{i}" for i in range(40, 100)] + [f"b{i}" for i in range(50)]


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("reset", ["earliest", "latest"])
def test_auto_offset_reset_without_a_committed_offset(broker, client, reset):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "reset", 1)
    produce(bootstrap, "reset", ["old-0", "old-1", "old-2"])
    consumer = open_consumer(client, bootstrap, "reset", f"fresh-{reset}", auto_offset_reset=reset)
    try:
        got = consumer.wait_positioned()
        produce(bootstrap, "reset", ["new-0"])
        got += consumer.consume((4 if reset == "earliest" else 1) - len(got), timeout=5)
        got += consumer.poll(10, 0.5)  # nothing more
    finally:
        consumer.close()
    assert got == (["old-0", "old-1", "old-2", "new-0"] if reset == "earliest" else ["new-0"])


@pytest.mark.parametrize("client", CLIENTS)
def test_auto_offset_reset_none_raises_without_a_committed_offset(broker, client):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "strict", 1)
    produce(bootstrap, "strict", ["x"])
    consumer = open_consumer(client, bootstrap, "strict", "strict-group", auto_offset_reset="none")
    try:
        with pytest.raises(Exception) as raised:
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                consumer.poll(10, 0.5)
        assert consumer.is_no_offset_error(raised.value), raised.value
    finally:
        consumer.close()


@pytest.mark.parametrize("client", CLIENTS)
def test_auto_offset_reset_none_resumes_from_a_committed_offset(broker, client):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "strict2", 1)
    produce(bootstrap, "strict2", ["x0", "x1", "x2"])
    setter = open_consumer(client, bootstrap, "strict2", "strict2-group", subscribe=False)
    setter.assign([0])
    setter.commit({0: 1})  # no membership: generation -1
    setter.close()
    consumer = open_consumer(client, bootstrap, "strict2", "strict2-group", auto_offset_reset="none")
    got = consumer.consume(2)
    got += consumer.poll(10, 0.5)  # nothing more
    consumer.close()
    assert got == ["x1", "x2"]


@pytest.mark.parametrize("client", CLIENTS)
def test_manual_commits_with_metadata_and_without_group_membership(broker, client):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "manual", 3)
    consumer = open_consumer(client, bootstrap, "manual", "manual-group", subscribe=False)
    consumer.assign([0, 1, 2])
    consumer.commit({0: 5}, metadata="checkpoint-a")
    consumer.commit({2: 7})
    assert (consumer.committed(0), consumer.committed(1), consumer.committed(2)) == (5, None, 7)  # 1: -1 on the wire
    consumer.close()
    offsets = _committed(bootstrap, "manual-group")
    assert {tp.partition: offset for tp, offset in offsets.items()} == {0: (5, consumer.sent_metadata("checkpoint-a")), 2: (7, "")}


@pytest.mark.parametrize("client", CLIENTS)
def test_auto_commit_commits_what_was_consumed_at_the_configured_interval(broker, client):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "auto", 1)
    interval = 2.0
    consumer = PolledConsumer(bootstrap, "auto", "auto-group", client, enable_auto_commit=True,
                              auto_commit_interval_ms=int(interval * 1000))
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)

    def committed() -> int | None:
        return _committed(bootstrap, "auto-group", admin).get(TopicPartition("auto", 0), (None,))[0]

    try:
        wait_until(lambda: consumer.assignment, 15, "an assignment")
        # Produce steadily; sample the committed offset: it moves in steps an interval apart.
        changes: list[tuple[float, int]] = []
        start = time.monotonic()
        sent = 0
        while time.monotonic() - start < 3 * interval + 0.5:
            produce(bootstrap, "auto", [f"m{sent}"])
            sent += 1
            offset = committed()
            if offset is not None and (not changes or changes[-1][1] != offset):
                changes.append((time.monotonic(), offset))
        wait_until(lambda: len(consumer.values()) == sent, 10, "every record consumed")
        wait_until(lambda: committed() == sent, interval + 3, "the final auto-commit")
    finally:
        admin.close()
        consumer.close()
    assert 2 <= len(changes) <= 4, changes
    gaps = [b[0] - a[0] for a, b in zip(changes, changes[1:])]
    assert all(gap > interval * 0.6 for gap in gaps), gaps
