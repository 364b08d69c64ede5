"""The broker clock: wall clock plus a forward-only offset, moved by advance_clock; every
time-based rule reads it and every background check now due runs at once."""

from __future__ import annotations

import select
import subprocess
import sys
import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

from trafka.testing.waiting import wait_until

HOUR_MS = 3_600_000


def earliest_and_latest(bootstrap: str, topic: str) -> tuple[int, int]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tp = TopicPartition(topic, 0)
        return consumer.beginning_offsets([tp])[tp], consumer.end_offsets([tp])[tp]
    finally:
        consumer.close()


def test_the_clock_only_moves_forward_and_survives_a_restart(broker):
    before = broker.clock()
    assert before["offset_ms"] == 0 and abs(before["time_ms"] - time.time() * 1000) < 5000
    after = broker.advance_clock(HOUR_MS)
    assert after["offset_ms"] == HOUR_MS
    assert after["time_ms"] - before["time_ms"] >= HOUR_MS
    for bad in (-1, 1.5, "10", True, None):
        with pytest.raises(ValueError, match="forward only"):
            broker.advance_clock(bad)
    broker.restart()
    assert broker.clock()["offset_ms"] == HOUR_MS
    broker.restart(kill=True)
    assert broker.clock()["offset_ms"] == HOUR_MS


def test_retention_of_one_hour_applies_when_the_clock_moves_two_hours(broker):
    """retention.ms=1h, the retention check every 5 minutes (Kafka's default): after
    advance_clock(2 h) the old records go at once, not at the next check."""
    bootstrap = broker.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("events", 1, 1, topic_configs={"retention.ms": str(HOUR_MS)})])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for n in range(10):
        producer.send("events", f"event-{n}".encode())
    producer.flush()
    producer.close()
    assert earliest_and_latest(bootstrap, "events") == (0, 10)

    broker.advance_clock(HOUR_MS // 2)  # half an hour: nothing is old enough yet (the check ran)
    assert earliest_and_latest(bootstrap, "events") == (0, 10)

    broker.advance_clock(2 * HOUR_MS)
    # log.retention.check.interval.ms is 300000: advance_clock ran the due check before returning.
    assert earliest_and_latest(bootstrap, "events") == (10, 10)


def test_log_append_time_and_segment_rolls_use_broker_time(broker):
    bootstrap = broker.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("stamped", 1, 1, topic_configs={
        "message.timestamp.type": "LogAppendTime", "segment.ms": str(HOUR_MS)})])
    admin.close()
    broker.advance_clock(3 * HOUR_MS)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    sent = producer.send("stamped", b"x").get(timeout=10)
    producer.send("stamped", b"y").get(timeout=10)
    broker.advance_clock(2 * HOUR_MS)  # past segment.ms: the next append rolls the segment
    producer.send("stamped", b"z").get(timeout=10)
    producer.close()
    # The broker stamped the record with its own time, three hours ahead of the wall clock.
    assert sent.timestamp >= time.time() * 1000 + 3 * HOUR_MS - 60_000
    segments = sorted(p.name for p in (broker.data_dir / "stamped-0").glob("*.log"))
    assert segments == ["00000000000000000000.log", "00000000000000000002.log"]


def test_committed_offsets_expire_when_the_clock_passes_offsets_retention(broker):
    """offsets.retention.minutes is Kafka's 7 days; the expiry check runs every 10 minutes."""
    from kafka.structs import OffsetAndMetadata

    bootstrap = broker.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("ledger", 1, 1)])
    tp = TopicPartition("ledger", 0)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id="auditors")
    consumer.assign([tp])
    consumer.commit({tp: OffsetAndMetadata(0, "", -1)})
    consumer.close(autocommit=False)
    try:
        assert tp in admin.list_group_offsets(["auditors"])["auditors"]
        broker.advance_clock(6 * 24 * HOUR_MS)  # the expiry check ran before this returned
        assert tp in admin.list_group_offsets(["auditors"])["auditors"]
        broker.advance_clock(24 * HOUR_MS + 60_000)
        assert tp not in admin.list_group_offsets(["auditors"])["auditors"]
    finally:
        admin.close()


CONSUMER_SCRIPT = """
import sys, time
from kafka import KafkaConsumer
consumer = KafkaConsumer("work", bootstrap_servers=sys.argv[1], group_id="workers",
                         session_timeout_ms=30000, heartbeat_interval_ms=1000)
while not consumer.assignment():
    consumer.poll(timeout_ms=200)
print("assigned", flush=True)
while True:
    consumer.poll(timeout_ms=200)
"""


def _group_members(bootstrap: str) -> int:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return len(admin.describe_groups(["workers"])["workers"]["members"])
    finally:
        admin.close()


def test_a_sigkilled_member_leaves_its_group_when_the_clock_passes_its_session_timeout(broker):
    """session.timeout.ms is 30 s; moving the clock in 10 s steps while the live member keeps
    heartbeating removes only the killed one, in about a second of real time."""
    bootstrap = broker.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("work", 4, 1)])
    admin.close()
    doomed = subprocess.Popen([sys.executable, "-c", CONSUMER_SCRIPT, bootstrap], stdout=subprocess.PIPE, text=True)
    survivor = KafkaConsumer("work", bootstrap_servers=bootstrap, group_id="workers",
                             session_timeout_ms=30000, heartbeat_interval_ms=1000)
    try:
        assert select.select([doomed.stdout], [], [], 60)[0], "the member to kill never got its partitions"
        assert doomed.stdout.readline().strip() == "assigned"

        def both_assigned():
            survivor.poll(timeout_ms=100)
            return len(survivor.assignment()) == 2
        wait_until(both_assigned, 30, "an even split between the two members")
        doomed.kill()
        doomed.wait()
        killed_at = time.monotonic()
        for _ in range(4):  # 40 s of broker time; the survivor heartbeats between the steps
            broker.advance_clock(10_000)
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline:
                survivor.poll(timeout_ms=100)

        def survivor_owns_all():
            survivor.poll(timeout_ms=100)
            return len(survivor.assignment()) == 4
        wait_until(survivor_owns_all, 15, "the killed member's partitions moving to the survivor")
        assert time.monotonic() - killed_at < 25  # well inside the real 30 s session timeout
        assert _group_members(bootstrap) == 1
    finally:
        doomed.kill()
        survivor.close()


def test_an_open_transaction_is_aborted_when_the_clock_passes_its_timeout(broker):
    """transaction.timeout.ms is 60 s and the timeout check runs every 10 s of real time:
    advancing 61 s aborts the open transaction at once (Kafka's epoch bump fences the producer)."""
    import confluent_kafka

    bootstrap = broker.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("ledger", 1, 1)])
    admin.close()
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "transactional.id": "ledger-writer",
                                         "transaction.timeout.ms": 60000})
    producer.init_transactions(10)
    producer.begin_transaction()
    producer.produce("ledger", b"abandoned", partition=0)
    assert producer.flush(10) == 0

    committed = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed")
    tp = TopicPartition("ledger", 0)
    try:
        def last_stable_offset() -> int:
            return committed.end_offsets([tp])[tp]
        assert last_stable_offset() == 0  # held back by the open transaction
        broker.advance_clock(61_000)
        # advance_clock returns after the due timeout check ran: the abort is already written.
        assert last_stable_offset() == 2  # the record and the abort marker
    finally:
        committed.close()
    with pytest.raises(confluent_kafka.KafkaException):
        producer.commit_transaction(10)
    assert "aborting after its timeout of 60000 ms" in broker.log_text()
