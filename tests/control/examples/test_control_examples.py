# %% imports
import select
import shutil
import subprocess
import sys
import time

import confluent_kafka
import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import TopicAuthorizationFailedError

from trafka.testing import TrafkaBroker

HOUR_MS = 3_600_000


def offsets(bootstrap, topic):
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    tp = TopicPartition(topic, 0)
    try:
        return consumer.beginning_offsets([tp])[tp], consumer.end_offsets([tp])[tp]
    finally:
        consumer.close()


# %% retention
def test_retention_without_waiting(trafka_inprocess_broker):
    bootstrap = trafka_inprocess_broker.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("clicks", 1, 1, topic_configs={"retention.ms": str(HOUR_MS)})])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for n in range(3):
        producer.send("clicks", f"click-{n}".encode())
    producer.close()

    trafka_inprocess_broker.advance_clock(2 * HOUR_MS)  # retention runs now, not in 5 minutes

    assert offsets(bootstrap, "clicks") == (3, 3)  # earliest moved past the aged-out records


# %% session-timeout
WORKER = """
import sys
from kafka import KafkaConsumer
consumer = KafkaConsumer("jobs", bootstrap_servers=sys.argv[1], group_id="workers",
                         session_timeout_ms=30000, heartbeat_interval_ms=1000)
while not consumer.assignment():
    consumer.poll(timeout_ms=200)
print("working", flush=True)
while True:
    consumer.poll(timeout_ms=200)
"""


def test_a_crashed_worker_is_removed_after_its_session_timeout(trafka_inprocess_broker):
    broker = trafka_inprocess_broker
    worker = subprocess.Popen([sys.executable, "-c", WORKER, broker.bootstrap_servers],
                              stdout=subprocess.PIPE, text=True)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    try:
        assert select.select([worker.stdout], [], [], 60)[0], "the worker never got its partitions"
        assert worker.stdout.readline().strip() == "working"
        worker.kill()  # SIGKILL: no LeaveGroup; only the session timeout can notice
        worker.wait()
        broker.advance_clock(31_000)  # past session.timeout.ms: the broker expires it now
        assert admin.describe_groups(["workers"])["workers"]["members"] == []
    finally:
        worker.kill()
        admin.close()


# %% transaction-timeout
def test_an_abandoned_transaction_is_aborted(trafka_inprocess_broker):
    broker = trafka_inprocess_broker
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers,
                                         "transactional.id": "ledger", "transaction.timeout.ms": 60000})
    producer.init_transactions(10)
    producer.begin_transaction()
    producer.produce("entries", b"never committed")
    producer.flush(10)

    broker.advance_clock(61_000)  # past transaction.timeout.ms: the broker aborts it now

    with pytest.raises(confluent_kafka.KafkaException):
        producer.commit_transaction(10)


# %% retries
@pytest.mark.parametrize("error", ["NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT"])
def test_the_producer_retries_through_broker_errors(trafka_inprocess_broker, error):
    broker = trafka_inprocess_broker
    delivered = []
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers,
                                         "enable.idempotence": True})
    with broker.inject_fault("Produce", error=error, count=3):
        producer.produce("payments", b"42 EUR", on_delivery=lambda err, msg: delivered.append(err))
        producer.flush(30)
    assert delivered == [None]
    assert broker.faults() == []  # all three errors were served


# %% non-retriable
def test_a_refused_write_reaches_the_application(trafka_inprocess_broker):
    broker = trafka_inprocess_broker
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    producer.send("audit", b"warm-up").get(timeout=10)
    broker.inject_fault("Produce", topic="audit", error="TOPIC_AUTHORIZATION_FAILED", count=1)
    with pytest.raises(TopicAuthorizationFailedError):
        producer.send("audit", b"secret").get(timeout=10)
    producer.close()


# %% delay
def test_a_slow_broker(trafka_inprocess_broker):
    broker = trafka_inprocess_broker
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    producer.send("slow", b"warm-up").get(timeout=10)
    broker.inject_fault("Produce", delay_ms=1500, count=1)
    start = time.monotonic()
    producer.send("slow", b"late").get(timeout=10)
    assert time.monotonic() - start >= 1.5
    producer.close()


# %% outage
def test_a_consumer_rides_through_an_outage(trafka_inprocess_broker):
    broker = trafka_inprocess_broker
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, retries=20)
    consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap_servers,
                                         "group.id": "dashboard", "auto.offset.reset": "earliest"})
    consumer.subscribe(["metrics"])
    producer.send("metrics", b"before").get(timeout=10)
    broker.inject_fault(down_ms=2000)  # every connection closed, new ones refused, for 2 s
    producer.send("metrics", b"after").get(timeout=30)
    seen = []
    deadline = time.monotonic() + 30
    while len(seen) < 2 and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and not message.error():
            seen.append(message.value())
    consumer.close()
    producer.close()
    assert seen == [b"before", b"after"]


# %% snapshot
@pytest.fixture(scope="module")
def catalogue_snapshot(tmp_path_factory):
    """Expensive state, built once: 1,000 products and a consumer group's committed offsets."""
    with TrafkaBroker(in_process=True) as broker:
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
        for n in range(1000):
            producer.send("products", f"product-{n}".encode(), partition=0)
        producer.close()
        snapshot = tmp_path_factory.mktemp("snapshots") / "catalogue"
        broker.snapshot(snapshot)
    return snapshot


@pytest.fixture
def catalogue_broker(catalogue_snapshot, tmp_path):
    """Each test gets its own copy: what one test writes, the next never sees."""
    data_dir = tmp_path / "data"
    shutil.copytree(catalogue_snapshot, data_dir)
    with TrafkaBroker(data_dir=data_dir, in_process=True) as broker:
        yield broker


@pytest.mark.parametrize("run", [1, 2])
def test_each_test_starts_from_the_snapshot(catalogue_broker, run):
    assert offsets(catalogue_broker.bootstrap_servers, "products") == (0, 1000)
    producer = KafkaProducer(bootstrap_servers=catalogue_broker.bootstrap_servers)
    producer.send("products", b"added by this test", partition=0).get(timeout=10)
    producer.close()
