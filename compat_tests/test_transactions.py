"""Transactions with every client (issue #12): commit, abort, several in a row, an empty
transaction, read_committed vs read_uncommitted, consume-transform-produce, fencing, a restarted
producer re-acquiring its id, the broker aborting a transaction past its timeout, and
cross-client reads (written transactionally by one client, read_committed by every other).

Each client runs the same scenarios through testkit/txn_clients.py.
"""

from __future__ import annotations

import uuid

import pytest

from compat_tests.conftest import make_driver, make_topic
from testkit.txn_clients import CLIENTS, TxnFailed, committed_offset, producer, read_values

COMMITTED = "read_committed"
UNCOMMITTED = "read_uncommitted"


def unique(what: str) -> str:
    return f"{what}-{uuid.uuid4().hex[:8]}"


_written: dict[str, str] = {}


def write_transactions(request, client: str, bootstrap: str) -> str:
    """Commit, abort, an empty transaction, commit again, then `end` committed: the topic."""
    if client not in _written:
        topic = make_topic(bootstrap, unique(f"txn-{client}"))
        p = producer(request, client, bootstrap, unique(f"tx-{client}"))
        p.init()
        p.begin(); p.send(topic, b"c1"); p.send(topic, b"c2"); p.commit()
        p.begin(); p.send(topic, b"a1"); p.send(topic, b"a2"); p.flush(); p.abort()
        p.begin(); p.commit()  # an empty transaction
        p.begin(); p.send(topic, b"c3"); p.commit()
        p.begin(); p.send(topic, b"a3"); p.flush(); p.abort()
        p.begin(); p.send(topic, b"end"); p.commit()
        _written[client] = topic
    return _written[client]


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("client", CLIENTS)
def test_commit_abort_in_a_row_and_isolation(request, bootstrap, client):
    topic = write_transactions(request, client, bootstrap)
    assert read_values(request, client, bootstrap, topic, COMMITTED, until=b"end") == [b"c1", b"c2", b"c3", b"end"]
    assert read_values(request, client, bootstrap, topic, UNCOMMITTED, until=b"end") == \
        [b"c1", b"c2", b"a1", b"a2", b"c3", b"a3", b"end"]


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("writer, client", [(w, r) for w in CLIENTS for r in CLIENTS if w != r])
def test_read_committed_what_another_client_wrote(request, bootstrap, writer, client):
    """Cross-client: every writer's transactions, read_committed by every other client (a
    writer's own reads are test_commit_abort_in_a_row_and_isolation)."""
    topic = write_transactions(request, writer, bootstrap)
    assert read_values(request, client, bootstrap, topic, COMMITTED, until=b"end") == [b"c1", b"c2", b"c3", b"end"]


def test_kcat_reads_only_committed_records(request, bootstrap):
    """kcat consumes with librdkafka's default isolation.level, read_committed. (No matrix cell:
    kcat cannot write transactions, which the row also means.)"""
    topic = write_transactions(request, "confluent-kafka", bootstrap)
    got = make_driver(request, "kcat", bootstrap).consume(topic, 4)
    assert [g.value for g in got] == [b"c1", b"c2", b"c3", b"end"]


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("client", CLIENTS)
def test_open_transaction_holds_read_committed_back(request, bootstrap, client):
    topic = make_topic(bootstrap, unique("open"))
    p = producer(request, client, bootstrap, unique("tx-open"))
    p.init()
    p.begin(); p.send(topic, b"before"); p.commit()
    p.begin(); p.send(topic, b"open"); p.flush()
    # A read_committed reader stops at the open transaction; read_uncommitted sees it. (The
    # open record sits in the log right after the committed one: a reader that may see it
    # gets it with that one, so 3 s more without it say it is held back.)
    assert read_values(request, client, bootstrap, topic, UNCOMMITTED, count=2) == [b"before", b"open"]
    assert read_values(request, "confluent-kafka", bootstrap, topic, COMMITTED, count=2, quiet_s=3) == [b"before"]
    p.send(topic, b"more"); p.commit()
    assert read_values(request, client, bootstrap, topic, COMMITTED, count=3) == [b"before", b"open", b"more"]


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("client", CLIENTS)
def test_consume_transform_produce(request, bootstrap, client):
    source = make_topic(bootstrap, unique("ctp-in"))
    sink = make_topic(bootstrap, unique("ctp-out"))
    feeder = producer(request, "confluent-kafka", bootstrap, unique("tx-feed"))
    feeder.init()
    feeder.begin()
    for i in range(5):
        feeder.send(source, f"in{i}".encode())
    feeder.commit()
    group, aborted_group = unique("ctp"), unique("ctp-aborted")
    consumed = read_values(request, client, bootstrap, source, COMMITTED, count=5)
    p = producer(request, client, bootstrap, unique("tx-ctp"))
    p.init()
    p.begin()
    for value in consumed:
        p.send(sink, value.replace(b"in", b"out"))
    p.send_offsets(source, 0, 5, group)
    p.commit()
    p.begin()
    p.send(sink, b"lost")
    p.send_offsets(source, 0, 5, aborted_group)
    p.flush()
    p.abort()
    assert read_values(request, client, bootstrap, sink, COMMITTED, count=5) == [f"out{i}".encode() for i in range(5)]
    assert committed_offset(bootstrap, group, source) == 5
    assert committed_offset(bootstrap, aborted_group, source) is None


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("client", CLIENTS)
def test_send_outside_a_transaction_is_refused(request, bootstrap, client):
    """A transactional producer cannot send before begin_transaction (the client refuses; the
    broker refuses the same on the wire: tests/transactions/test_wire.py)."""
    topic = make_topic(bootstrap, unique("outside"))
    p = producer(request, client, bootstrap, unique("tx-outside"))
    p.init()
    with pytest.raises(TxnFailed):
        p.send(topic, b"outside")
        p.flush()
    p.begin(); p.send(topic, b"inside"); p.commit()
    # Java's send() queues the record before it throws, so it leaves with the next transaction
    # (the same against Kafka); the others drop it.
    expected = [b"outside", b"inside"] if client.startswith("java") else [b"inside"]
    assert read_values(request, client, bootstrap, topic, COMMITTED, until=b"inside") == expected


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("client", CLIENTS)
def test_fencing_and_restart_reacquiring_the_id(request, bootstrap, client):
    topic = make_topic(bootstrap, unique("fence"))
    transactional_id = unique("tx-fence")
    zombie = producer(request, client, bootstrap, transactional_id)
    zombie.init()
    zombie.begin(); zombie.send(topic, b"zombie"); zombie.flush()
    # The same id started again (a restarted application): the zombie's transaction is aborted.
    successor = producer(request, client, bootstrap, transactional_id)
    successor.init()
    with pytest.raises(TxnFailed):
        zombie.send(topic, b"zombie-2")
        zombie.commit()
    successor.begin(); successor.send(topic, b"successor"); successor.commit()
    assert read_values(request, client, bootstrap, topic, COMMITTED, until=b"successor") == [b"successor"]


@pytest.mark.compat("transactions")
@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.trafka_config({"offsets.topic.num.partitions": 3, "transaction.state.log.num.partitions": 3})
def test_broker_aborts_a_transaction_past_its_timeout(request, trafka_inprocess_broker, client):
    trafka_broker = trafka_inprocess_broker  # its clock moves on request (advance_clock)
    bootstrap = trafka_broker.bootstrap_servers
    topic = make_topic(bootstrap, unique("timeout"))
    p = producer(request, client, bootstrap, unique("tx-timeout"), timeout_ms=5000)
    p.init()
    p.begin(); p.send(topic, b"abandoned"); p.flush()
    # Broker time past the 5 s timeout and the 10 s check interval: the check runs at once.
    trafka_broker.advance_clock(15000)
    later = producer(request, "confluent-kafka", bootstrap, unique("tx-later"))
    later.init()
    later.begin(); later.send(topic, b"later"); later.commit()
    # The abandoned transaction was aborted: read_committed moves past it.
    assert read_values(request, client, bootstrap, topic, COMMITTED, until=b"later") == [b"later"]
    assert read_values(request, client, bootstrap, topic, UNCOMMITTED, until=b"later") == [b"abandoned", b"later"]
    with pytest.raises(TxnFailed):  # its producer was fenced by the abort's epoch bump
        p.commit()
