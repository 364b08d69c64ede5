"""Committed offsets: kept in __consumer_offsets, through restarts, as each client expects."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.errors import NoOffsetForPartitionError
from kafka.structs import OffsetAndMetadata

from groups_helpers import PolledConsumer, create_topic, group_consumer, produce, wait_until


def _consume(consumer, count: int, timeout: float = 15) -> list[str]:
    got: list[str] = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=500).values():
            got.extend(r.value.decode() for r in batch)
    return got


def _committed(bootstrap: str, group: str, admin: KafkaAdminClient | None = None) -> dict[TopicPartition, int]:
    client = admin or KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return {tp: meta.offset for tp, meta in client.list_group_offsets([group])[group].items()}
    finally:
        if admin is None:
            client.close()


def test_restarted_consumer_resumes_at_its_commit_and_catches_up_across_a_broker_restart(broker):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "log", 1)
    produce(bootstrap, "log", [f"a{i}" for i in range(100)])
    consumer = group_consumer(bootstrap, "log", "resumer", max_poll_records=10)
    first = _consume(consumer, 40)
    read = first[:40]
    # Commit exactly after the 40th record: the committed offset is the next one to read.
    consumer.commit({TopicPartition("log", 0): OffsetAndMetadata(40, "", -1)})
    consumer.close(autocommit=False)
    assert read == [f"a{i}" for i in range(40)]

    produce(bootstrap, "log", [f"b{i}" for i in range(50)])  # written while the consumer is down
    broker.restart()
    assert _committed(bootstrap, "resumer") == {TopicPartition("log", 0): 40}

    consumer = group_consumer(bootstrap, "log", "resumer")
    rest = _consume(consumer, 110)
    consumer.close(autocommit=False)
    assert rest == [f"a{i}" for i in range(40, 100)] + [f"b{i}" for i in range(50)]


@pytest.mark.parametrize("reset", ["earliest", "latest"])
def test_auto_offset_reset_without_a_committed_offset(broker, reset):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "reset", 1)
    produce(bootstrap, "reset", ["old-0", "old-1", "old-2"])
    consumer = group_consumer(bootstrap, "reset", f"fresh-{reset}", auto_offset_reset=reset)
    got: list[str] = []
    deadline = time.monotonic() + 15
    while not (consumer.assignment() and all(consumer.position(tp) is not None for tp in consumer.assignment())):
        assert time.monotonic() < deadline, "no assignment"
        for batch in consumer.poll(timeout_ms=200).values():
            got.extend(r.value.decode() for r in batch)
    produce(bootstrap, "reset", ["new-0"])
    got += _consume(consumer, (4 if reset == "earliest" else 1) - len(got), timeout=5)
    consumer.close(autocommit=False)
    assert got == (["old-0", "old-1", "old-2", "new-0"] if reset == "earliest" else ["new-0"])


def test_auto_offset_reset_none_raises_without_a_committed_offset(broker):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "strict", 1)
    produce(bootstrap, "strict", ["x"])
    consumer = group_consumer(bootstrap, "strict", "strict-group", auto_offset_reset="none")
    try:
        with pytest.raises(NoOffsetForPartitionError):
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                consumer.poll(timeout_ms=500)
    finally:
        consumer.close(autocommit=False)


def test_auto_offset_reset_none_resumes_from_a_committed_offset(broker):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "strict2", 1)
    produce(bootstrap, "strict2", ["x0", "x1", "x2"])
    setter = group_consumer(bootstrap, None, "strict2-group")
    setter.assign([TopicPartition("strict2", 0)])
    setter.commit({TopicPartition("strict2", 0): OffsetAndMetadata(1, "", -1)})  # no membership: generation -1
    setter.close(autocommit=False)
    consumer = group_consumer(bootstrap, "strict2", "strict2-group", auto_offset_reset="none")
    got = _consume(consumer, 2)
    consumer.close(autocommit=False)
    assert got == ["x1", "x2"]


def test_manual_commits_with_metadata_and_without_group_membership(broker):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "manual", 3)
    consumer = group_consumer(bootstrap, None, "manual-group")
    consumer.assign([TopicPartition("manual", p) for p in range(3)])
    consumer.commit({
        TopicPartition("manual", 0): OffsetAndMetadata(5, "checkpoint-a", -1),
        TopicPartition("manual", 2): OffsetAndMetadata(7, "", -1),
    })
    assert consumer.committed(TopicPartition("manual", 0), metadata=True) == OffsetAndMetadata(5, "checkpoint-a", -1)
    assert consumer.committed(TopicPartition("manual", 1)) is None  # offset -1 on the wire
    consumer.close(autocommit=False)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    offsets = admin.list_group_offsets(["manual-group"])["manual-group"]
    admin.close()
    assert {tp.partition: (m.offset, m.metadata) for tp, m in offsets.items()} == {0: (5, "checkpoint-a"), 2: (7, "")}


def test_auto_commit_commits_what_was_consumed_at_the_configured_interval(broker):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "auto", 1)
    interval = 2.0
    consumer = PolledConsumer(bootstrap, "auto", "auto-group", enable_auto_commit=True, auto_commit_interval_ms=int(interval * 1000))
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        wait_until(lambda: consumer.assignment, 15, "an assignment")
        # Produce steadily; sample the committed offset: it moves in steps an interval apart.
        changes: list[tuple[float, int]] = []
        start = time.monotonic()
        sent = 0
        while time.monotonic() - start < 3 * interval + 0.5:
            produce(bootstrap, "auto", [f"m{sent}"])
            sent += 1
            offset = _committed(bootstrap, "auto-group", admin).get(TopicPartition("auto", 0))
            if offset is not None and (not changes or changes[-1][1] != offset):
                changes.append((time.monotonic(), offset))
        wait_until(lambda: len(consumer.records) == sent, 10, "every record consumed")
        final = lambda: _committed(bootstrap, "auto-group", admin).get(TopicPartition("auto", 0)) == sent  # noqa: E731
        wait_until(final, interval + 3, "the final auto-commit")
    finally:
        admin.close()
        consumer.close()
    assert 2 <= len(changes) <= 4, changes
    gaps = [b[0] - a[0] for a, b in zip(changes, changes[1:])]
    assert all(gap > interval * 0.6 for gap in gaps), gaps
