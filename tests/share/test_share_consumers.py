"""Share groups (KIP-932) with confluent-kafka's ShareConsumer against a real broker: members
sharing one partition, RELEASE and lock expiry redelivering with delivery count 2, REJECT and
the delivery limit archiving, acknowledgements surviving a restart."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer

from testkit.groups import create_topic
from trafka.testing.rawwire import RawClient
from trafka.wire.types import ZERO_UUID


def share_consumer(broker, group: str, *, explicit: bool = False, client_id: str = "share") -> ShareConsumer:
    config = {"bootstrap.servers": broker.bootstrap_servers, "group.id": group, "client.id": client_id}
    if explicit:
        config["share.acknowledgement.mode"] = "explicit"
    consumer = ShareConsumer(config)
    return consumer



def produce(broker, topic: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for value in values:
        producer.produce(topic, value, partition=0)
    assert producer.flush(10) == 0


def poll_until(consumer: ShareConsumer, want: int, timeout: float = 20):
    """Records polled until `want` came or `timeout` passed. The consumers here acknowledge
    explicitly and may not poll again before acknowledging, so the first poll that returns
    records ends it."""
    got, end = [], time.monotonic() + timeout
    while len(got) < want and time.monotonic() < end:
        polled = consumer.poll(0.5) or []
        for message in polled:
            assert message.error() is None, message.error()
            got.append(message)
        if polled:
            break
    return got


def joined(consumer: ShareConsumer, broker, group: str, members: int = 1) -> None:
    """Poll until the group has `members` members (the share partition starts at the log end:
    share.auto.offset.reset=latest, Kafka's default), then once more so a fetch opened."""
    end = time.monotonic() + 20
    while time.monotonic() < end:
        consumer.poll(0.2)
        with RawClient(broker.bootstrap_servers) as raw:
            [described] = raw.request(77, 1, {"group_ids": [group], "include_authorized_operations": False}).groups
        if described.error_code == 0 and len(described.members) >= members and all(
                m.assignment.topic_partitions for m in described.members):
            consumer.poll(0.5)
            return
    raise AssertionError(f"{group} never had {members} members with assignments")


@pytest.fixture
def topic(broker):
    create_topic(broker.bootstrap_servers, "jobs", 1)
    return "jobs"


def test_two_members_share_one_partition_and_no_record_goes_to_both(long_lock_broker):
    broker = long_lock_broker
    topic = "jobs"
    create_topic(broker.bootstrap_servers, topic, 1)
    first = share_consumer(broker, "workers", explicit=True, client_id="first")
    second = share_consumer(broker, "workers", explicit=True, client_id="second")
    first.subscribe([topic])
    second.subscribe([topic])
    joined(first, broker, "workers", 2)
    joined(second, broker, "workers", 2)
    with RawClient(broker.bootstrap_servers) as raw:
        [described] = raw.request(77, 1, {"group_ids": ["workers"], "include_authorized_operations": False}).groups
    assert [[tp.partitions for tp in m.assignment.topic_partitions] for m in described.members] == [[[0]], [[0]]]
    produce(broker, topic, [b"r%d" % i for i in range(40)])
    # Both members fetch (librdkafka also fetches ahead in the background) and accept what they
    # got; locks last a minute, so a record goes to a second member only if the first gave it up.
    received: dict[str, list[int]] = {"first": [], "second": []}
    end = time.monotonic() + 30
    while sum(map(len, received.values())) < 40 and time.monotonic() < end:
        for name, consumer in (("first", first), ("second", second)):
            for message in consumer.poll(0.2) or []:
                received[name].append(message.offset())
                consumer.acknowledge(message)
            consumer.commit_sync(10)
    everything = received["first"] + received["second"]
    assert sorted(everything) == list(range(40)), received  # each record to exactly one member
    first.close()
    second.close()


def test_release_redelivers_with_delivery_count_two_and_reject_never_again(broker, topic):
    consumer = share_consumer(broker, "g", explicit=True)
    consumer.subscribe([topic])
    joined(consumer, broker, "g")
    produce(broker, topic, [b"released", b"rejected"])
    first = poll_until(consumer, 2)
    assert [(m.value(), m.delivery_count()) for m in first] == [(b"released", 1), (b"rejected", 1)]
    consumer.acknowledge(first[0], AcknowledgeType.RELEASE)
    consumer.acknowledge(first[1], AcknowledgeType.REJECT)
    consumer.commit_sync(10)
    again = poll_until(consumer, 1)
    assert [(m.offset(), m.value(), m.delivery_count()) for m in again] == [(0, b"released", 2)]
    consumer.acknowledge(again[0], AcknowledgeType.ACCEPT)
    consumer.commit_sync(10)
    produce(broker, topic, [b"later"])
    later = poll_until(consumer, 1)
    assert [(m.value(), m.delivery_count()) for m in later] == [(b"later", 1)]
    consumer.acknowledge(later[0])
    consumer.commit_sync(10)
    assert poll_until(consumer, 1, timeout=2) == []  # the rejected record never comes back
    consumer.close()


def test_an_expired_lock_redelivers_and_the_delivery_limit_archives(broker, topic):
    """A member that acquires a record and then goes quiet (the raw protocol, so nothing else
    is fetched on its behalf) loses it when group.share.record.lock.duration.ms (1.5 s) runs
    out; the other member gets it as its second delivery; released then, it has reached
    group.share.delivery.count.limit (2) and is archived, never delivered again."""
    with RawClient(broker.bootstrap_servers) as raw:
        topic_id = raw.request(3, 12, {"topics": [{"name": topic, "topic_id": ZERO_UUID}],
                                       "allow_auto_topic_creation": False,
                                       "include_topic_authorized_operations": False}).topics[0].topic_id
        joined_raw = raw.request(76, 1, {"group_id": "g", "member_id": "quiet-member", "member_epoch": 0,
                                         "rack_id": None, "subscribed_topic_names": [topic]})
        assert joined_raw.error_code == 0
        fetch = {"group_id": "g", "member_id": "quiet-member", "max_wait_ms": 0, "min_bytes": 1,
                 "max_bytes": 1 << 20, "max_records": 10, "batch_size": 10, "forgotten_topics_data": [],
                 "topics": [{"topic_id": topic_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": []}]}]}
        opened = raw.request(78, 1, {**fetch, "share_session_epoch": 0})
        assert opened.error_code == 0
        produce(broker, topic, [b"slow"])
        held = raw.request(78, 1, {**fetch, "share_session_epoch": 1, "max_wait_ms": 5000})
        [[acquired]] = [[(a.first_offset, a.last_offset, a.delivery_count) for a in p.acquired_records]
                        for t in held.responses for p in t.partitions]
        assert acquired == (0, 0, 1)
        other = share_consumer(broker, "g", explicit=True, client_id="other")
        other.subscribe([topic])
        [again] = poll_until(other, 1, timeout=15)
        assert (again.offset(), again.value(), again.delivery_count()) == (0, b"slow", 2)
        other.acknowledge(again, AcknowledgeType.RELEASE)
        other.commit_sync(10)
        produce(broker, topic, [b"next"])
        nxt = poll_until(other, 2, timeout=10)
        assert [m.value() for m in nxt] == [b"next"]
        other.acknowledge(nxt[0])
        other.commit_sync(10)
        other.close()
        # The quiet member's late acknowledgement of the record it no longer holds is refused.
        late = raw.request(79, 1, {"group_id": "g", "member_id": "quiet-member", "share_session_epoch": 2, "topics": [
            {"topic_id": topic_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
                {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]}]}]})
        assert late.error_code == 0
        assert [p.error_code for t in late.responses for p in t.partitions] == [121]  # INVALID_RECORD_STATE


def test_acknowledged_records_stay_done_across_a_restart(broker, topic):
    consumer = share_consumer(broker, "g", explicit=True)
    consumer.subscribe([topic])
    joined(consumer, broker, "g")
    produce(broker, topic, [b"done-%d" % i for i in range(3)] + [b"pending"])
    got = poll_until(consumer, 4)
    for message in got[:3]:
        consumer.acknowledge(message)
    consumer.commit_sync(10)  # the fourth stays acquired
    consumer.close()
    broker.restart()
    after = share_consumer(broker, "g", explicit=True)
    after.subscribe([topic])
    redelivered = poll_until(after, 1, timeout=20)
    assert [(m.value(), m.offset()) for m in redelivered] == [(b"pending", 3)]
    after.acknowledge(redelivered[0])
    after.commit_sync(10)
    after.close()


def test_list_describe_and_delete_a_share_group(broker, topic):
    """ListGroups shows the group with type "share", DescribeGroups refuses it as a classic
    group, DeleteGroups refuses it while it has members and deletes it (and its partitions'
    state) once empty: a new group of that name starts again at the log end."""
    from confluent_kafka.admin import AdminClient

    consumer = share_consumer(broker, "listed", explicit=True)
    consumer.subscribe([topic])
    joined(consumer, broker, "listed")
    produce(broker, topic, [b"one"])
    [message] = poll_until(consumer, 1)
    consumer.acknowledge(message)
    consumer.commit_sync(10)
    with RawClient(broker.bootstrap_servers) as raw:
        listed = raw.request(16, 5, {"states_filter": [], "types_filter": ["share"]}).groups
        assert [(g.group_id, g.group_type, g.group_state, g.protocol_type) for g in listed] == [
            ("listed", "share", "Stable", "share")]
        [classic] = raw.request(15, 6, {"groups": ["listed"], "include_authorized_operations": False}).groups
        assert classic.error_code == 69  # GROUP_ID_NOT_FOUND: not a classic group
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    with pytest.raises(Exception, match="NON_EMPTY_GROUP|not empty"):
        admin.delete_consumer_groups(["listed"])["listed"].result(10)
    consumer.close()
    with RawClient(broker.bootstrap_servers) as raw:
        deleted = raw.request(42, 2, {"groups_names": ["listed"]}).results
        assert [(r.group_id, r.error_code) for r in deleted] == [("listed", 0)]
        assert raw.request(16, 5, {"states_filter": [], "types_filter": ["share"]}).groups == []


def test_a_share_partition_goes_on_from_where_it_started_after_a_restart(broker, topic):
    """The share-partition's start is written when the group first fetches it: records produced
    after that and never acknowledged are still the group's after a restart, although the
    restart moved nothing and the log end is past them."""
    consumer = share_consumer(broker, "g", explicit=True)
    consumer.subscribe([topic])
    joined(consumer, broker, "g")
    consumer.close()
    produce(broker, topic, [b"kept-0", b"kept-1"])
    broker.restart()
    after = share_consumer(broker, "g", explicit=True)
    after.subscribe([topic])
    got = poll_until(after, 2)
    assert [(m.offset(), m.value()) for m in got] == [(0, b"kept-0"), (1, b"kept-1")]
    for message in got:
        after.acknowledge(message)
    after.commit_sync(10)
    after.close()


def test_trafka_share_groups_shows_each_share_partition_from_the_files(broker, topic):
    """`trafka share-groups --data-dir` (kafka-share-groups.sh --describe from the files, beside
    the running broker): start offset, log end, lag and records by state."""
    import subprocess
    import sys

    consumer = share_consumer(broker, "described", explicit=True)
    consumer.subscribe([topic])
    joined(consumer, broker, "described")
    produce(broker, topic, [b"r%d" % i for i in range(4)])
    got = poll_until(consumer, 4)
    assert len(got) == 4
    consumer.acknowledge(got[0])
    consumer.acknowledge(got[1], AcknowledgeType.REJECT)
    consumer.acknowledge(got[2])
    consumer.acknowledge(got[3], AcknowledgeType.RELEASE)
    consumer.commit_sync(10)
    consumer.close()
    out = subprocess.run([sys.executable, "-m", "trafka", "share-groups", "--data-dir", str(broker.data_dir)],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines()[1:]]
    assert rows[0] == ["GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LOG-END-OFFSET", "LAG", "ACKNOWLEDGED",
                       "ARCHIVED", "AVAILABLE"]
    # Offsets 0-2 are done (accepted, rejected, accepted): the start moved past them; 3 was released.
    assert rows[1:] == [["described", topic, "0", "3", "4", "1", "0", "0", "1"]]
