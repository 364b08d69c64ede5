"""A share group as a work queue, where users lean on it: several confluent-kafka ShareConsumers
sharing one partition's backlog of thousands of records (each record to one member at a time,
every member getting work, `max.poll.records` honoured as Kafka's KIP-1206 soft limit),
acknowledgements sent by close(), answers that hold only an acknowledgement, and a poison
record whose delivery count survives a restart."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer

from testkit.groups import create_topic, share_from_earliest
from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient
from trafka.wire.records import iter_batches
from trafka.wire.types import ZERO_UUID

# Short locks so expiry can be watched; the smallest delivery limit Kafka allows (as conftest.py).
SHARE_CONFIG = {"group.share.record.lock.duration.ms": 1500, "group.share.delivery.count.limit": 2,
                "group.share.heartbeat.interval.ms": 500, "offsets.topic.num.partitions": 3,
                "share.coordinator.state.topic.num.partitions": 3}
RECORDS, PER_BATCH = 2000, 20


@pytest.fixture
def queue_broker(tmp_path):
    """Locks that outlast the test: a record redelivered here would be a bug, not an expiry."""
    with TrafkaBroker(data_dir=tmp_path / "data", config={**SHARE_CONFIG, "group.share.record.lock.duration.ms": 60000,
                                                            "group.share.delivery.count.limit": 5}) as running:
        yield running


def share_consumer(broker, group: str, client_id: str, **extra) -> ShareConsumer:
    return ShareConsumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group, "client.id": client_id,
                          "share.acknowledgement.mode": "explicit", **extra})


def produce_batches(broker, topic: str, count: int, per_batch: int, partition: int = 0) -> None:
    """`count` records in batches of `per_batch` (each batch flushed on its own)."""
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 1000,
                         "batch.num.messages": per_batch})
    for first in range(0, count, per_batch):
        for i in range(first, min(first + per_batch, count)):
            producer.produce(topic, b"job-%d" % i, partition=partition)
        assert producer.flush(10) == 0


def topic_id_of(broker, topic: str):
    with RawClient(broker.bootstrap_servers) as raw:
        return raw.request(3, 12, {"topics": [{"name": topic, "topic_id": ZERO_UUID}], "allow_auto_topic_creation": False,
                                   "include_topic_authorized_operations": False}).topics[0].topic_id


def raw_join(raw, group: str, member: str, topic: str) -> None:
    """A share-group member on the wire (ShareGroupHeartbeat, epoch 0) subscribed to `topic`."""
    assert raw.request(76, 1, {"group_id": group, "member_id": member, "member_epoch": 0, "rack_id": None,
                               "subscribed_topic_names": [topic]}).error_code == 0


def raw_share_fetch(raw, group: str, member: str, topic_id, epoch: int, max_records: int, max_wait_ms: int = 3000):
    """One ShareFetch of partition 0 of the topic, acknowledging nothing: the answer."""
    return raw.request(78, 1, {
        "group_id": group, "member_id": member, "share_session_epoch": epoch, "max_wait_ms": max_wait_ms,
        "min_bytes": 1, "max_bytes": 1 << 20, "max_records": max_records, "batch_size": max_records,
        "forgotten_topics_data": [],
        "topics": [{"topic_id": topic_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": []}]}]})


def members_of(broker, group: str) -> int:
    with RawClient(broker.bootstrap_servers) as raw:
        [described] = raw.request(77, 1, {"group_ids": [group], "include_authorized_operations": False}).groups
    return len([m for m in described.members if m.assignment.topic_partitions]) if described.error_code == 0 else 0


def test_members_share_a_backlog_each_poll_within_max_poll_records(queue_broker):
    """2,000 records in batches of 20, two members with max.poll.records=50 (batch_optimized):
    no poll returns more than the whole batches reaching 50 (60 records), both members get
    work, and every record is delivered once."""
    broker = queue_broker
    create_topic(broker.bootstrap_servers, "jobs", 1)
    consumers = {name: share_consumer(broker, "workers", name, **{"max.poll.records": 50}) for name in ("a", "b")}
    for consumer in consumers.values():
        consumer.subscribe(["jobs"])
    deadline = time.monotonic() + 20
    while members_of(broker, "workers") < 2 and time.monotonic() < deadline:
        for consumer in consumers.values():
            consumer.poll(0.2)
    assert members_of(broker, "workers") == 2
    share_from_earliest(broker.bootstrap_servers, "workers")
    produce_batches(broker, "jobs", RECORDS, PER_BATCH)
    seen: dict[int, str] = {}
    polls: dict[str, list[int]] = {name: [] for name in consumers}
    deadline = time.monotonic() + 60
    while len(seen) < RECORDS and time.monotonic() < deadline:
        for name, consumer in consumers.items():
            polled = consumer.poll(0.3) or []
            if polled:
                polls[name].append(len(polled))
            for message in polled:
                assert message.error() is None, message.error()
                assert message.offset() not in seen, f"offset {message.offset()} delivered to {seen[message.offset()]} and {name}"
                assert message.delivery_count() == 1
                seen[message.offset()] = name
                consumer.acknowledge(message, AcknowledgeType.ACCEPT)
    for consumer in consumers.values():
        consumer.close()
    assert sorted(seen) == list(range(RECORDS))
    assert all(size <= 60 for sizes in polls.values() for size in sizes), polls
    shares = {name: sum(1 for owner in seen.values() if owner == name) for name in consumers}
    assert all(share >= RECORDS // 10 for share in shares.values()), shares


def test_acknowledgements_sent_by_close_are_kept(queue_broker):
    """close() leaves the group, then acknowledges with the final session epoch: the ACCEPTs
    count, and the next member gets only the records after them."""
    broker = queue_broker
    create_topic(broker.bootstrap_servers, "jobs", 1)
    share_from_earliest(broker.bootstrap_servers, "closers")
    produce_batches(broker, "jobs", 200, PER_BATCH)
    first = share_consumer(broker, "closers", "first", **{"max.poll.records": 50})
    first.subscribe(["jobs"])
    got, deadline = [], time.monotonic() + 20
    while not got and time.monotonic() < deadline:
        got = first.poll(0.5) or []
    assert got and all(m.error() is None for m in got)
    for message in got:
        first.acknowledge(message, AcknowledgeType.ACCEPT)
    first.close()  # the acknowledgements go with close()
    done = {m.offset() for m in got}
    second = share_consumer(broker, "closers", "second", **{"max.poll.records": 500})
    second.subscribe(["jobs"])
    later, deadline = {}, time.monotonic() + 30
    while len(later) < 200 - len(done) and time.monotonic() < deadline:
        for message in second.poll(0.5) or []:
            later[message.offset()] = message.delivery_count()
            second.acknowledge(message, AcknowledgeType.ACCEPT)
    second.close()
    assert not done & set(later), f"accepted in close() and delivered again: {sorted(done & set(later))[:10]}"
    assert sorted(done | set(later)) == list(range(200))
    assert set(later.values()) == {1}


def test_an_answer_holding_only_an_acknowledgement_has_empty_records_not_null(queue_broker):
    broker = queue_broker
    create_topic(broker.bootstrap_servers, "two", 2)
    topic_id = topic_id_of(broker, "two")
    share_from_earliest(broker.bootstrap_servers, "raw")
    produce_batches(broker, "two", 5, 5, partition=0)
    with RawClient(broker.bootstrap_servers) as raw:
        assert raw.request(76, 1, {"group_id": "raw", "member_id": "m", "member_epoch": 0, "rack_id": None,
                                   "subscribed_topic_names": ["two"]}).error_code == 0

        def fetch(epoch, acks=(), wait=3000):
            parts = [{"partition_index": p, "acknowledgement_batches": list(acks) if p == 0 else []} for p in (0, 1)]
            return raw.request(78, 1, {"group_id": "raw", "member_id": "m", "share_session_epoch": epoch, "max_wait_ms": wait,
                                       "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100, "batch_size": 100,
                                       "forgotten_topics_data": [], "topics": [{"topic_id": topic_id, "partitions": parts}]})
        held = fetch(0)
        assert [(p.partition_index, [(a.first_offset, a.last_offset) for a in p.acquired_records])
                for t in held.responses for p in t.partitions] == [(0, [(0, 4)])]
        produce_batches(broker, "two", 3, 3, partition=1)
        answer = fetch(1, acks=[{"first_offset": 0, "last_offset": 4, "acknowledge_types": [1]}])
        by_partition = {p.partition_index: p for t in answer.responses for p in t.partitions}
        assert by_partition[0].acknowledge_error_code == 0
        assert by_partition[0].records == b""  # not null: librdkafka drops a whole answer with a null record set
        assert [(a.first_offset, a.last_offset) for a in by_partition[1].acquired_records] == [(0, 2)]


def test_a_share_fetch_of_a_deep_backlog_answers_only_the_batches_it_acquired(queue_broker):
    """2,000 records in batches of 50 and max_bytes for all of them: each answer holds the
    batches of the records it acquired (as Kafka slices a share fetch's records), not all of
    the log max_bytes reaches, which members that fell behind their producer were sent at
    every fetch."""
    broker = queue_broker
    create_topic(broker.bootstrap_servers, "deep", 1)
    topic_id = topic_id_of(broker, "deep")
    share_from_earliest(broker.bootstrap_servers, "backlog")
    produce_batches(broker, "deep", 2000, 50)
    with RawClient(broker.bootstrap_servers) as raw:
        raw_join(raw, "backlog", "m", "deep")
        for epoch, first in ((0, 0), (1, 100), (2, 200)):
            answer = raw_share_fetch(raw, "backlog", "m", topic_id, epoch, 100)
            [partition] = [p for t in answer.responses for p in t.partitions]
            assert [(a.first_offset, a.last_offset) for a in partition.acquired_records] == [(first, first + 99)]
            assert [h.base_offset for _, h in iter_batches(partition.records)] == [first, first + 50]


def test_a_member_acknowledging_one_partition_while_fetching_another_gets_its_records(queue_broker):
    """The answer that carries one partition's acknowledgement result and another's records
    reaches confluent-kafka whole (with a null record set it dropped it, and the records stayed
    locked for the 60 s lock)."""
    broker = queue_broker
    create_topic(broker.bootstrap_servers, "pair", 2)
    share_from_earliest(broker.bootstrap_servers, "pairs")
    consumer = share_consumer(broker, "pairs", "pair")
    consumer.subscribe(["pair"])
    seen: list[tuple[int, int]] = []
    for partition in (0, 1, 0, 1):
        produce_batches(broker, "pair", 10, 10, partition=partition)
        deadline = time.monotonic() + 15
        before = len(seen)
        while len(seen) < before + 10 and time.monotonic() < deadline:
            for message in consumer.poll(0.5) or []:
                seen.append((message.partition(), message.offset()))
                consumer.acknowledge(message, AcknowledgeType.ACCEPT)
        assert len(seen) == before + 10, f"partition {partition}: {len(seen) - before} of 10 records within 15 s"
    consumer.close()
    assert sorted(seen) == sorted([(0, o) for o in range(20)] + [(1, o) for o in range(20)])


def test_a_poison_record_is_archived_at_the_limit_across_a_restart(tmp_path):
    """delivery.count.limit 2: a record acquired once whose lock ran out (the broker clock moved;
    the lock timer releases it and writes the state), then a restart: its next delivery is its
    second, and released then it is archived, never delivered a third time."""
    with TrafkaBroker(data_dir=tmp_path / "data", config=SHARE_CONFIG) as broker:
        create_topic(broker.bootstrap_servers, "poison", 1)
        topic_id = topic_id_of(broker, "poison")
        share_from_earliest(broker.bootstrap_servers, "p")
        produce_batches(broker, "poison", 1, 1)
        with RawClient(broker.bootstrap_servers) as raw:
            raw_join(raw, "p", "doomed", "poison")
            held = raw_share_fetch(raw, "p", "doomed", topic_id, 0, 10)
            assert [(a.first_offset, a.delivery_count) for t in held.responses for p in t.partitions
                    for a in p.acquired_records] == [(0, 1)]
            broker.advance_clock(SHARE_CONFIG["group.share.record.lock.duration.ms"] + 1)
            broker.restart()
        consumer = share_consumer(broker, "p", "after")
        consumer.subscribe(["poison"])
        got, deadline = [], time.monotonic() + 20
        while not got and time.monotonic() < deadline:
            got = consumer.poll(0.5) or []
        assert [(m.offset(), m.delivery_count()) for m in got] == [(0, 2)]
        consumer.acknowledge(got[0], AcknowledgeType.RELEASE)
        consumer.commit_sync(10)
        produce_batches(broker, "poison", 1, 1)
        later, deadline = [], time.monotonic() + 10
        while not later and time.monotonic() < deadline:
            later = consumer.poll(0.5) or []
        assert [(m.offset(), m.delivery_count()) for m in later] == [(1, 1)]
        consumer.acknowledge(later[0])
        consumer.commit_sync(10)
        assert not [m for m in consumer.poll(2) or []], "the archived record came back"
        consumer.close()
