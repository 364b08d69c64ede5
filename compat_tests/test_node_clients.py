"""KafkaJS and @platformatic/kafka beyond test_common.py: data in many batches (every codec, the
stored batches checked on the wire), idempotent sequences across many batches, transactions
(commit, abort, read_committed, cross-client, offsets in a transaction, fencing), consumer groups
with rebalances and commits. Both clients run in their session's Node process (the fixtures
node_kafkajs / node_platformatic); the broker is the session's.
"""

from __future__ import annotations

import time
import uuid

import pytest

from compat_tests.conftest import make_driver, make_topic
from testkit import txn_clients
from testkit.clients.base import Msg, TxnFailed
from testkit.clients.node import NodeError, NodeTxn, read_values_node, wait_state
from testkit.groups import produce as produce_values
from trafka.testing import TrafkaBroker
from trafka.testing.rawwire import RawClient
from trafka.testing.waiting import wait_until

NODE = ["kafkajs", "platformatic-kafka"]
FIXTURE = {"kafkajs": "node_kafkajs", "platformatic-kafka": "node_platformatic"}
CODEC_BITS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
COMMITTED, UNCOMMITTED = "read_committed", "read_uncommitted"


def unique(what: str) -> str:
    return f"{what}-{uuid.uuid4().hex[:8]}"


def node_client(request, client: str):
    return request.getfixturevalue(FIXTURE[client])


def batches_of(bootstrap: str, topic: str, partition: int = 0):
    with RawClient(bootstrap) as raw:
        return raw.fetch_batches(topic, partition)


@pytest.mark.compat("produce", "consume", "compression", "headers")
@pytest.mark.parametrize("client", NODE)
def test_thousands_of_records_in_many_batches_every_codec(request, bootstrap, client):
    """1,000 records per codec, 100 per send (50 batches in all), with null keys, null values,
    empty values and repeated header keys among them; the stored batches carry each codec's
    attribute bits; the client reads all 5,000 back from offset 0 and again from the middle of a
    compressed batch, and confluent-kafka reads what it wrote."""
    driver = make_driver(request, client, bootstrap)
    topic = make_topic(bootstrap, unique(f"many-{client}"))
    sent: list[Msg] = []
    for codec in CODEC_BITS:
        msgs = [Msg(None if i % 97 == 0 else f"{codec}-{i}".encode(),
                    None if i % 89 == 0 else b"" if i % 83 == 0 else (f"{codec}:{i}:" * (i % 13 + 1)).encode(),
                    (("h", str(i).encode()), ("codec", codec.encode())), 1_650_000_000_000 + len(sent) + i)
                for i in range(1000)]
        assert driver.produce(topic, msgs, codec=codec, chunk=100) == list(range(len(sent), len(sent) + 1000))
        sent += msgs

    batches = batches_of(bootstrap, topic)
    assert len(batches) == 50 and sum(b.record_count for b in batches) == 5000
    assert [b.attributes & 7 for b in batches] == [bit for bit in CODEC_BITS.values() for _ in range(10)]

    def expected(start: int):
        return [(start + i, m.key, m.value, m.headers, m.timestamp) for i, m in enumerate(sent[start:])]

    got = driver.consume(topic, 5000)
    assert [(g.offset, g.key, g.value, g.headers, g.timestamp) for g in got] == expected(0)
    got = driver.consume(topic, 5000 - 2345, offset=2345)  # inside a snappy batch
    assert [(g.offset, g.key, g.value, g.headers, g.timestamp) for g in got] == expected(2345)
    got = make_driver(request, "confluent-kafka", bootstrap).consume(topic, 5000)
    assert [(g.offset, g.key, g.value, g.headers, g.timestamp) for g in got] == expected(0)


@pytest.mark.compat("produce")
@pytest.mark.parametrize("client", NODE)
def test_acks_0_and_1_and_records_near_the_size_limit(request, bootstrap, client):
    """500 records with acks=0 (the broker sends no answer; the next requests on the connection
    must still match theirs), 500 with acks=1, then 900 KB records alone and 400 KB ones five to a
    zstd batch: all stored in order, read back whole."""
    driver = make_driver(request, client, bootstrap)
    topic = make_topic(bootstrap, unique(f"acks-{client}"))
    unanswered = [Msg(None, b"a0-%03d" % i) for i in range(500)]
    driver.produce(topic, unanswered, chunk=50, acks=0)
    assert driver.produce(topic, [Msg(None, b"a1-%03d" % i) for i in range(500)], chunk=50, acks=1) == list(range(500, 1000))
    big = [Msg(b"big", bytes([65 + i]) * 900_000) for i in range(3)] + [Msg(b"z", bytes([70 + i]) * 400_000) for i in range(5)]
    assert driver.produce(topic, big[:3], chunk=1) == [1000, 1001, 1002]
    assert driver.produce(topic, big[3:], codec="zstd", chunk=5) == [1003, 1004, 1005, 1006, 1007]
    got = driver.consume(topic, 1008)
    assert [g.value for g in got] == [m.value for m in unanswered] + [b"a1-%03d" % i for i in range(500)] + [m.value for m in big]


@pytest.mark.compat("idempotent")
@pytest.mark.parametrize("client", NODE)
def test_idempotent_producer_sequences_across_many_batches(request, bootstrap, client):
    """3,000 records in 30 sends of one idempotent producer: one producer id and epoch, base
    sequences continuing from batch to batch, offsets with no gap and no duplicate."""
    driver = make_driver(request, client, bootstrap)
    topic = make_topic(bootstrap, unique(f"idem-many-{client}"))
    msgs = [Msg(b"k%d" % (i % 7), b"v%06d" % i) for i in range(3000)]
    assert driver.produce(topic, msgs, codec="lz4", idempotent=True, chunk=100) == list(range(3000))
    batches = batches_of(bootstrap, topic)
    assert len(batches) == 30
    assert len({(b.producer_id, b.producer_epoch) for b in batches}) == 1 and batches[0].producer_id >= 0
    assert [b.base_sequence for b in batches] == [100 * i for i in range(30)]
    assert [g.value for g in driver.consume(topic, 3000)] == [m.value for m in msgs]


@pytest.fixture(scope="module")
def fast_kip848_broker(tmp_path_factory):
    broker = TrafkaBroker(data_dir=tmp_path_factory.mktemp("node-kip848") / "data",
                          config={"group.consumer.heartbeat.interval.ms": 500,
                                  "group.consumer.min.heartbeat.interval.ms": 500})
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def write_transactions(request, client: str, bootstrap: str, topic: str) -> None:
    """Commit, abort, an empty transaction, commit again, abort, then `end` committed."""
    p = NodeTxn(node_client(request, client), bootstrap, unique(f"tx-{client}"), 60000)
    try:
        p.init()
        p.begin(); p.send(topic, b"c1"); p.send(topic, b"c2"); p.commit()
        p.begin(); p.send(topic, b"a1"); p.send(topic, b"a2"); p.flush(); p.abort()
        if client == "kafkajs":  # @platformatic/kafka sends EndTxn for an empty one: test_empty_transaction_...
            p.begin(); p.commit()  # an empty transaction
        p.begin(); p.send(topic, b"c3"); p.commit()
        p.begin(); p.send(topic, b"a3"); p.flush(); p.abort()
        p.begin(); p.send(topic, b"end"); p.commit()
    finally:
        p.close()


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("client", NODE)
def test_transactions_commit_abort_and_isolation(request, bootstrap, client):
    """The client's own transactions read back by itself at both isolation levels and
    read_committed by confluent-kafka and Java kafka-clients 4.3.0."""
    node = node_client(request, client)
    topic = make_topic(bootstrap, unique(f"txn-{client}"))
    write_transactions(request, client, bootstrap, topic)
    committed = [b"c1", b"c2", b"c3", b"end"]
    aborted = aborted_in_fetch(bootstrap, topic)
    assert [offset for _, offset in aborted] == [3, 8] and len({p for p, _ in aborted}) == 1
    if client == "kafkajs":  # @platformatic/kafka: test_platformatic_read_committed_skips_every_aborted_transaction
        assert read_values_node(node, bootstrap, topic, COMMITTED, until=b"end") == committed
    assert read_values_node(node, bootstrap, topic, UNCOMMITTED, until=b"end") == \
        [b"c1", b"c2", b"a1", b"a2", b"c3", b"a3", b"end"]
    for reader in ("confluent-kafka", "java-4.3.0"):
        assert txn_clients.read_values(request, reader, bootstrap, topic, COMMITTED, until=b"end") == committed


def aborted_in_fetch(bootstrap: str, topic: str) -> list[tuple[int, int]]:
    """(producer id, first offset) of the aborted transactions a read_committed Fetch (v11) of
    the whole partition lists, as Kafka lists them for a consumer to skip."""
    with RawClient(bootstrap) as raw:
        body = raw.request(1, 11, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
                                   "isolation_level": 1, "session_id": 0, "session_epoch": -1, "rack_id": "",
                                   "forgotten_topics_data": [],
                                   "topics": [{"topic": topic, "partitions": [{
                                       "partition": 0, "fetch_offset": 0, "current_leader_epoch": -1,
                                       "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}]})
    part = body.responses[0].partitions[0]
    assert part.error_code == 0, part
    return [(a.producer_id, a.first_offset) for a in part.aborted_transactions or []]


@pytest.mark.xfail(strict=True, reason="@platformatic/kafka 2.12.1 (not trafka): its read_committed filter keys the "
                   "aborted ranges of a Fetch answer by producer id, so of two aborted transactions of one producer "
                   "in one answer only the last is skipped")
def test_platformatic_read_committed_skips_every_aborted_transaction(request, bootstrap):
    """Two aborted transactions of one producer: the broker lists both in the Fetch answer (as
    Kafka does; checked on the wire), confluent-kafka skips both, @platformatic/kafka the last."""
    node = node_client(request, "platformatic-kafka")
    topic = make_topic(bootstrap, unique("txn-two-aborts"))
    write_transactions(request, "platformatic-kafka", bootstrap, topic)
    assert [offset for _, offset in aborted_in_fetch(bootstrap, topic)] == [3, 8]
    committed = [b"c1", b"c2", b"c3", b"end"]
    assert txn_clients.read_values(request, "confluent-kafka", bootstrap, topic, COMMITTED, until=b"end") == committed
    assert read_values_node(node, bootstrap, topic, COMMITTED, until=b"end") == committed


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("client", ["platformatic-kafka"])
def test_empty_transactions_of_platformatic_are_answered_as_kafka_answers_them(request, bootstrap, client):
    """@platformatic/kafka sends EndTxn (v4) even for a transaction it added no partition to
    (Java and KafkaJS end such a transaction without a request). Kafka's coordinator (transaction
    version 1) answers by the transaction's last state: an empty commit after a commit NONE, an
    empty abort after it INVALID_TXN_STATE, and the producer goes on afterwards."""
    node = node_client(request, client)
    topic = make_topic(bootstrap, unique("txn-empty"))
    p = NodeTxn(node, bootstrap, unique("tx-empty"), 60000)
    try:
        p.init()
        p.begin(); p.send(topic, b"c1"); p.commit()
        p.begin(); p.commit()  # CompleteCommit + COMMIT: NONE (as a retried commit)
        p.begin()
        with pytest.raises(TxnFailed) as failed:
            p.abort()  # CompleteCommit + ABORT
        assert failed.value.error == "INVALID_TXN_STATE"
        p.begin(); p.send(topic, b"end"); p.commit()
    finally:
        p.close()
    assert read_values_node(node, bootstrap, topic, COMMITTED, until=b"end") == [b"c1", b"end"]


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("writer", ["confluent-kafka", "java-4.3.0"])
@pytest.mark.parametrize("client", NODE)
def test_read_committed_what_another_client_wrote_in_transactions(request, bootstrap, client, writer):
    topic = make_topic(bootstrap, unique(f"txn-{writer}"))
    p = txn_clients.producer(request, writer, bootstrap, unique(f"tx-{writer}"))
    p.init()
    p.begin(); p.send(topic, b"c1"); p.commit()
    p.begin(); p.send(topic, b"a1"); p.send(topic, b"a2"); p.flush(); p.abort()
    p.begin(); p.send(topic, b"end"); p.commit()
    node = node_client(request, client)
    assert read_values_node(node, bootstrap, topic, COMMITTED, until=b"end") == [b"c1", b"end"]
    assert read_values_node(node, bootstrap, topic, UNCOMMITTED, until=b"end") == [b"c1", b"a1", b"a2", b"end"]


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("client", NODE)
def test_large_aborted_and_committed_transactions(request, bootstrap, client):
    """2,000 records in one aborted transaction, then 2,000 in one committed: read_committed sees
    exactly the committed ones, read_uncommitted all 4,000 (each transaction spans many batches)."""
    node = node_client(request, client)
    topic = make_topic(bootstrap, unique(f"txn-big-{client}"))
    p = NodeTxn(node, bootstrap, unique(f"tx-big-{client}"), 60000)
    try:
        p.init()
        for outcome in ("abort", "commit"):
            p.begin()
            for i in range(2000):
                p.send(topic, b"%s-%04d" % (outcome.encode(), i))
                if i % 250 == 249:
                    p.flush()
            getattr(p, outcome)()
    finally:
        p.close()
    assert len(batches_of(bootstrap, topic)) >= 8 + 2  # data batches and two markers
    committed = [b"commit-%04d" % i for i in range(2000)]
    assert read_values_node(node, bootstrap, topic, COMMITTED, count=2000) == committed
    assert read_values_node(node, bootstrap, topic, UNCOMMITTED, count=4000) == [b"abort-%04d" % i for i in range(2000)] + committed
    assert txn_clients.read_values(request, "confluent-kafka", bootstrap, topic, COMMITTED, count=2000) == committed


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("client", NODE)
def test_offsets_committed_in_a_transaction(request, bootstrap, client):
    """Consume-transform-produce: the input offset committed for a group inside the transaction
    that writes the output; after an aborted one the group's offset stays, after a committed one
    it moves."""
    node = node_client(request, client)
    source = make_topic(bootstrap, unique(f"ctp-in-{client}"))
    sink = make_topic(bootstrap, unique(f"ctp-out-{client}"))
    group = unique(f"ctp-{client}")
    p = NodeTxn(node, bootstrap, unique(f"tx-ctp-{client}"), 60000)
    try:
        p.init()
        p.begin(); p.send(sink, b"out-1"); p.send_offsets(source, 0, 10, group); p.abort()
        assert txn_clients.committed_offset(bootstrap, group, source) is None
        p.begin(); p.send(sink, b"out-2"); p.send_offsets(source, 0, 20, group); p.commit()
    finally:
        p.close()
    assert txn_clients.committed_offset(bootstrap, group, source) == 20
    assert read_values_node(node, bootstrap, sink, COMMITTED, until=b"out-2") == [b"out-2"]


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("client", NODE)
def test_an_open_transaction_holds_read_committed_back(request, bootstrap, client):
    """The client's own read_committed reader stops before an open transaction (the last stable
    offset) and reads on once it commits; read_uncommitted sees the open records at once."""
    node = node_client(request, client)
    topic = make_topic(bootstrap, unique(f"txn-open-{client}"))
    p = NodeTxn(node, bootstrap, unique(f"tx-open-{client}"), 60000)
    try:
        p.init()
        p.begin(); p.send(topic, b"before"); p.commit()
        p.begin(); p.send(topic, b"open"); p.flush()
        assert read_values_node(node, bootstrap, topic, UNCOMMITTED, count=2) == [b"before", b"open"]
        assert read_values_node(node, bootstrap, topic, COMMITTED, count=2, quiet_s=1.5) == [b"before"]
        if client == "platformatic-kafka":  # ListOffsets latest per isolation: the last stable offset, the end
            for isolation, end in ((1, "2"), (0, "3")):  # before, its marker, open
                (t,) = make_driver(request, client, bootstrap).admin("listOffsets", {"isolationLevel": isolation, "topics": [
                    {"name": topic, "partitions": [{"partitionIndex": 0, "timestamp": {"$bigint": "-1"}}]}]})
                assert t["partitions"][0]["offset"] == end, (isolation, t)
        p.send(topic, b"more"); p.commit()
    finally:
        p.close()
    assert read_values_node(node, bootstrap, topic, COMMITTED, count=3) == [b"before", b"open", b"more"]


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("client", NODE)
def test_the_broker_aborts_a_transaction_past_its_timeout(request, trafka_inprocess_broker, client):
    """A transaction left open past its timeout (5 s, the client's own setting) is aborted by the
    broker (its clock moved, not slept): read_committed moves past it, the producer is fenced."""
    broker = trafka_inprocess_broker
    bootstrap = broker.bootstrap_servers
    node = node_client(request, client)
    topic = make_topic(bootstrap, unique(f"txn-timeout-{client}"))
    p = NodeTxn(node, bootstrap, unique(f"tx-timeout-{client}"), 5000)
    try:
        p.init()
        p.begin(); p.send(topic, b"abandoned"); p.flush()
        broker.advance_clock(15000)  # past the timeout and the 10 s check interval: the check runs now
        later = txn_clients.producer(request, "confluent-kafka", bootstrap, unique("tx-later"))
        later.init()
        later.begin(); later.send(topic, b"later"); later.commit()
        assert read_values_node(node, bootstrap, topic, COMMITTED, until=b"later") == [b"later"]
        assert read_values_node(node, bootstrap, topic, UNCOMMITTED, until=b"later") == [b"abandoned", b"later"]
        with pytest.raises(TxnFailed):  # fenced by the abort's epoch bump
            p.commit()
    finally:
        p.close()


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("client", NODE)
def test_a_new_producer_of_the_same_transactional_id_fences_the_old_one(request, bootstrap, client):
    node = node_client(request, client)
    topic = make_topic(bootstrap, unique(f"fence-{client}"))
    tid = unique(f"tx-fence-{client}")
    old = NodeTxn(node, bootstrap, tid, 60000)
    new = NodeTxn(node, bootstrap, tid, 60000)
    try:
        old.init()
        old.begin(); old.send(topic, b"old-open"); old.flush()
        new.init()  # bumps the epoch and aborts old's open transaction
        new.begin(); new.send(topic, b"new"); new.commit()
        with pytest.raises(TxnFailed) as failed:
            old.send(topic, b"old-late"); old.commit()
        assert failed.value.error in {"PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH", "KafkaJSNonRetriableError",
                                      "ProtocolError", "ResponseError"}, failed.value
    finally:
        old.close()
        new.close()
    assert read_values_node(node, bootstrap, topic, COMMITTED, until=b"new") == [b"new"]
    assert read_values_node(node, bootstrap, topic, UNCOMMITTED, count=2, quiet_s=1.0) == [b"old-open", b"new"]


@pytest.mark.compat("group")
@pytest.mark.parametrize("client, protocol", [("kafkajs", "classic"), ("platformatic-kafka", "classic"),
                                              ("platformatic-kafka", "consumer")])
def test_group_rebalances_as_members_come_and_go(request, bootstrap, client, protocol):
    """4 partitions, 4,000 records. One member takes all four partitions; a second joins and the
    partitions are split between them (no partition twice); the first leaves and the second takes
    all four; every record is read, and the group's committed offsets end at the log ends.
    @platformatic/kafka also as a KIP-848 member (group.protocol=consumer: ConsumerGroupHeartbeat,
    the broker's assignor)."""
    join = {}
    if protocol == "consumer":  # its own broker, telling members to heartbeat every 500 ms (Kafka: 5 s)
        bootstrap, join = request.getfixturevalue("fast_kip848_broker").bootstrap_servers, {"groupProtocol": protocol}
    driver = make_driver(request, client, bootstrap)
    topic = make_topic(bootstrap, unique(f"rebalance-{client}"), partitions=4)
    group = unique(f"rebalance-{client}")
    produce_values(bootstrap, topic, [f"v{i:05d}" for i in range(2000)], partitions=4)
    a = driver.member(topic, group, **join)
    b = None
    try:
        wait_state(a, lambda s: s["assignment"] == [0, 1, 2, 3] and len(s["values"]) >= 2000, what="a alone")
        b = driver.member(topic, group, **join)
        state_b = wait_state(b, lambda s: s["assignment"], what="b assigned")
        state_a = wait_state(a, lambda s: 0 < len(s["assignment"]) < 4, what="a gives partitions up")
        assert set(state_a["assignment"]) | set(state_b["assignment"]) == {0, 1, 2, 3}
        assert not set(state_a["assignment"]) & set(state_b["assignment"])
        produce_values(bootstrap, topic, [f"v{i:05d}" for i in range(2000, 4000)], partitions=4)
        wait_state(b, lambda s: len(set(s["values"]) | set(a.state()["values"])) >= 4000, what="both read the rest")
        values_a = a.state()["values"]
        a.close()
        wait_state(b, lambda s: s["assignment"] == [0, 1, 2, 3], what="b takes every partition")
        produce_values(bootstrap, topic, [f"v{i:05d}" for i in range(4000, 4400)], partitions=4)
        last = {f"v{i:05d}".encode() for i in range(4000, 4400)}
        values_b = wait_state(b, lambda s: last <= set(s["values"]), what="b reads the last records")["values"]
    finally:
        a.close()
        if b is not None:
            b.close()
    assert set(values_a) | set(values_b) == {f"v{i:05d}".encode() for i in range(4400)}
    assert _committed_all(bootstrap, group, topic, 4) == {p: 1100 for p in range(4)}


def _committed_all(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        got = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)
    finally:
        consumer.close()
    return {tp.partition: tp.offset for tp in got}


@pytest.mark.compat("group")
@pytest.mark.parametrize("client", ["platformatic-kafka"])
def test_static_members_leave_and_are_removed(request, bootstrap, client):
    """Static members (group.instance.id) with a 30 s session: one that closes (LeaveGroup with
    its instance id) hands its partition over at once, not after the session; the admin's
    removal of an instance no longer in the group is answered UNKNOWN_MEMBER_ID, as Kafka answers
    it. (@platformatic/kafka sends a null member id for a removal by instance id unless given "",
    a request Kafka cannot parse: it closes the connection, and so does trafka.)"""
    driver = make_driver(request, client, bootstrap)
    topic = make_topic(bootstrap, unique("static"), partitions=2)
    group = unique("static-group")
    a = driver.member(topic, group, groupInstanceId="inst-a", sessionTimeout=30000)
    b = driver.member(topic, group, groupInstanceId="inst-b", sessionTimeout=30000)
    try:
        wait_state(b, lambda s: len(s["assignment"]) == 1, what="b has one partition")
        wait_state(a, lambda s: len(s["assignment"]) == 1, what="a has one partition")
        members = driver.admin("describeGroups", {"groups": [group]})[group]["members"]
        assert sorted(m["groupInstanceId"] for m in members.values()) == ["inst-a", "inst-b"]
        a.close()
        wait_state(b, lambda s: s["assignment"] == [0, 1], timeout=10, what="b takes both at once")
        with pytest.raises(NodeError) as unknown:
            driver.admin("removeMembersFromConsumerGroup", {"groupId": group, "members": [
                {"memberId": "", "groupInstanceId": "inst-a"}]})
        assert unknown.value.kafka_errors() == {"UNKNOWN_MEMBER_ID"}, unknown.value.text()
    finally:
        a.close()
        b.close()


@pytest.fixture(scope="module")
def cleaning_broker(tmp_path_factory):
    """A broker whose cleaner passes every 100 ms (Kafka: 15 s), for compacted topics."""
    broker = TrafkaBroker(data_dir=tmp_path_factory.mktemp("node-compaction") / "data",
                          config={"log.cleaner.backoff.ms": 100})
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.mark.compat("consume")
@pytest.mark.parametrize("client, codec", [("kafkajs", "snappy"), ("platformatic-kafka", "zstd")])
def test_reading_a_compacted_log_with_gaps(request, cleaning_broker, client, codec):
    """3,000 records over 60 keys, 20 to a batch, 10 keys deleted by tombstones at the end, on a
    compacted topic with small segments: once the cleaner ran, the client reads the latest value
    of every key (and the tombstones, within delete.retention.ms) at their original offsets, with
    gaps between them, from offset 0, from an offset the cleaner removed, and as a group member."""
    bootstrap = cleaning_broker.bootstrap_servers
    driver = make_driver(request, client, bootstrap)
    topic = make_topic(bootstrap, unique(f"compacted-{client}"), configs={
        "cleanup.policy": "compact", "segment.bytes": "4000", "segment.ms": "1000",
        "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "600000"})
    now = int(time.time() * 1000)
    msgs = [Msg(b"key-%02d" % (i % 60), b"v%04d-" % i + b"x" * 30, (), now) for i in range(3000)]
    msgs += [Msg(b"key-%02d" % k, None, (), now) for k in range(10)]  # tombstones
    driver.produce(topic, msgs, codec=codec, chunk=20)
    # A record 2 s ahead rolls the segment (segment.ms): everything before it may be cleaned.
    driver.produce(topic, [Msg(b"roll", b"roll", (), now + 2000)], codec=codec)
    latest: dict[bytes, tuple[int, bytes | None]] = {}
    for offset, m in enumerate(msgs + [Msg(b"roll", b"roll")]):
        latest[m.key] = (offset, m.value)
    expected = sorted((offset, key, value) for key, (offset, value) in latest.items())

    def cleaned():
        with RawClient(bootstrap) as raw:
            return sum(b.record_count for b in raw.fetch_batches(topic)) == len(expected)

    wait_until(cleaned, 20, "the cleaner to compact the closed segments")
    got = driver.consume(topic, len(expected))
    assert [(g.offset, g.key, g.value) for g in got] == expected
    assert expected[0][0] == 2950  # keys 10-59's last values, then the tombstones, then the roll
    got = driver.consume(topic, len(expected), offset=1234)  # removed: the read starts at the next kept
    assert [(g.offset, g.key, g.value) for g in got] == expected
    got = driver.group_consume(topic, unique("compacted-group"), len(expected))
    assert sorted((g.offset, g.key, g.value) for g in got) == expected


@pytest.mark.compat("group")
@pytest.mark.parametrize("client", NODE)
def test_a_group_whose_committed_offset_was_deleted_starts_again_at_the_log_start(request, bootstrap, client):
    """The group committed offset 10; records before 50 are deleted (DeleteRecords); its next
    member's Fetch at 10 is OFFSET_OUT_OF_RANGE and the client resets to the log start (earliest):
    it reads 50-99, nothing before, nothing twice."""
    driver = make_driver(request, client, bootstrap)
    topic, group = make_topic(bootstrap, unique(f"reset-{client}")), unique(f"reset-{client}")
    driver.produce(topic, [Msg(b"k", b"v%03d" % i) for i in range(100)], chunk=10)
    assert [g.offset for g in driver.group_consume(topic, group, 10)] == list(range(10))
    with RawClient(bootstrap) as raw:
        deleted = raw.request(21, 2, {"topics": [{"name": topic, "partitions": [{"partition_index": 0, "offset": 50}]}],
                                      "timeout_ms": 10000})
    assert deleted.topics[0].partitions[0].low_watermark == 50
    got = driver.group_consume(topic, group, 50)
    assert [(g.offset, g.value) for g in got] == [(i, b"v%03d" % i) for i in range(50, 100)]
