"""ListOffsets by timestamp (and max timestamp) finds only what the caller may fetch, as Kafka's
ReplicaManager.fetchOffset does: an offset found at or past the last fetchable offset (the last
stable offset for read_committed, the high watermark otherwise) is answered as no offset
(-1, timestamp -1), not as that offset. A read_committed consumer's offsetsForTimes must not
land inside an open transaction. Real clients over a real socket."""

from __future__ import annotations

import uuid

from confluent_kafka import IsolationLevel, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

COMMITTED, OPEN = 800, 400
T0 = 1_700_000_000_000


def _list(admin, topic: str, spec, isolation) -> tuple[int, int]:
    found = admin.list_offsets({TopicPartition(topic, 0): spec}, isolation_level=isolation)
    info = found[TopicPartition(topic, 0)].result(10)
    return info.offset, info.timestamp


def test_offsets_found_past_the_last_stable_offset_are_none_for_read_committed(trafka_broker):
    bootstrap = trafka_broker.bootstrap_servers
    topic = f"times-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)
    plain = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(COMMITTED):  # committed, timestamps T0 + i
        plain.produce(topic, b"c%d" % i, partition=0, timestamp=T0 + i)
    assert plain.flush(20) == 0
    txn = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"t-{topic}", "linger.ms": 5})
    txn.init_transactions(20)
    txn.begin_transaction()
    for i in range(OPEN):  # open, later timestamps
        txn.produce(topic, b"o%d" % i, partition=0, timestamp=T0 + COMMITTED + i)
    assert txn.flush(20) == 0
    committed, uncommitted = IsolationLevel.READ_COMMITTED, IsolationLevel.READ_UNCOMMITTED
    assert _list(admin, topic, OffsetSpec.latest(), committed) == (COMMITTED, -1)
    assert _list(admin, topic, OffsetSpec.for_timestamp(T0 + 10), committed) == (10, T0 + 10)
    # Inside the open transaction: read_committed may not fetch there yet.
    assert _list(admin, topic, OffsetSpec.for_timestamp(T0 + COMMITTED + 5), committed)[0] == -1
    assert _list(admin, topic, OffsetSpec.max_timestamp(), committed)[0] == -1
    # read_uncommitted reads up to the high watermark, the open records included.
    assert _list(admin, topic, OffsetSpec.for_timestamp(T0 + COMMITTED + 5), uncommitted) == (COMMITTED + 5,
                                                                                               T0 + COMMITTED + 5)
    assert _list(admin, topic, OffsetSpec.max_timestamp(), uncommitted)[0] == COMMITTED + OPEN - 1
    txn.commit_transaction(20)
    # Committed (the marker after them), every one of them is found.
    assert _list(admin, topic, OffsetSpec.for_timestamp(T0 + COMMITTED + 5), committed) == (COMMITTED + 5,
                                                                                             T0 + COMMITTED + 5)
