"""kill -9 with transactions committed, aborted and open (confluent-kafka against a broker
process): after the restart every committed transaction is visible to read_committed, the
open one is aborted after its timeout so the last stable offset moves on, transactional
offsets committed before the kill are there, and nothing acknowledged is lost."""

from __future__ import annotations

import uuid

import pytest

from testkit.txn_clients import producer, read_values

pytestmark = pytest.mark.trafka_config({"offsets.topic.num.partitions": 3, "transaction.state.log.num.partitions": 3})


def _topic(bootstrap: str) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"durable-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, 1, 1)]).values():
        future.result(10)
    return name


def _committed(bootstrap: str, group: str, topic: str) -> int:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        (got,) = consumer.committed([TopicPartition(topic, 0)], timeout=10)
        return got.offset
    finally:
        consumer.close()


@pytest.mark.timeout(120)
def test_kill_9_with_transactions_committed_aborted_and_open(request, trafka_broker):
    bootstrap = trafka_broker.bootstrap_servers
    topic = _topic(bootstrap)
    group = f"g-{uuid.uuid4().hex[:8]}"
    done = producer(request, "confluent-kafka", bootstrap, "durable-done")
    done.init()
    done.begin(); done.send(topic, b"c1"); done.send_offsets(topic, 0, 1, group); done.commit()
    done.begin(); done.send(topic, b"a1"); done.flush(); done.abort()
    done.begin(); done.send(topic, b"c2"); done.commit()
    hanging = producer(request, "confluent-kafka", bootstrap, "durable-open", timeout_ms=60000)
    hanging.init()
    hanging.begin(); hanging.send(topic, b"open"); hanging.flush()

    trafka_broker.restart(kill=True)
    bootstrap = trafka_broker.bootstrap_servers

    assert read_values(request, "confluent-kafka", bootstrap, topic, "read_uncommitted", count=4) == \
        [b"c1", b"a1", b"c2", b"open"]
    assert _committed(bootstrap, group, topic) == 1
    # The open transaction is aborted once its timeout passes on the broker clock, which the
    # test moves instead of waiting; then later transactions show.
    trafka_broker.advance_clock(70000)
    after = producer(request, "confluent-kafka", bootstrap, "durable-after")
    after.init()
    after.begin(); after.send(topic, b"after"); after.commit()
    assert read_values(request, "confluent-kafka", bootstrap, topic, "read_committed", until=b"after") == \
        [b"c1", b"c2", b"after"]
    # And again after a clean restart: the transaction index and producer state came back.
    trafka_broker.restart()
    assert read_values(request, "confluent-kafka", trafka_broker.bootstrap_servers, topic, "read_committed",
                       until=b"after") == [b"c1", b"c2", b"after"]
