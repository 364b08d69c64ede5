"""Injected faults, seen by real clients: errors for the next N requests, delays, dropped
connections, throttles, a whole-broker outage; and the same through the raw wire."""

from __future__ import annotations

import time

import confluent_kafka
import kafka.errors
import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic

from trafka.testing.rawwire import RawClient
from trafka.broker.requests.error_responses import error_response
from trafka.broker.requests.routes import load_handlers
from trafka.wire import records
from trafka.wire.messages import APIS
from trafka.wire.schema import Array
from testkit.kafka_python import stored_values
from testkit.wire_samples import Sampler


def create_topic(bootstrap: str, name: str, partitions: int = 1) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(name, partitions, 1)])
    admin.close()


def confluent_produce(bootstrap: str, topic: str, values: list[bytes], **settings) -> list:
    """Produce and flush; returns each delivery report's error (None when delivered)."""
    reports = []
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "retry.backoff.ms": 50, **settings})
    for value in values:
        producer.produce(topic, value, partition=0, on_delivery=lambda err, msg: reports.append(err))
    assert producer.flush(30) == 0
    return reports


@pytest.mark.parametrize("error", ["NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT"])
def test_confluent_producer_retries_through_injected_retriable_errors(broker, error):
    create_topic(broker.bootstrap_servers, "orders")
    with broker.inject_fault("Produce", error=error, count=3) as fault:
        reports = confluent_produce(broker.bootstrap_servers, "orders", [b"a", b"b"], **{"enable.idempotence": True})
        assert reports == [None, None]
        assert broker.faults() == []  # used up: three Produce requests were answered with the error
    assert fault.description["remaining"] == 3
    assert stored_values(broker.bootstrap_servers, "orders") == [b"a", b"b"]


@pytest.mark.parametrize("error", ["NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT"])
def test_kafka_python_producer_retries_through_injected_retriable_errors(broker, error):
    create_topic(broker.bootstrap_servers, "orders")
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, retries=5, retry_backoff_ms=50)
    try:
        broker.inject_fault("Produce", error=error, count=2)
        metadata = producer.send("orders", b"a", partition=0).get(timeout=30)
        assert metadata.offset == 0
    finally:
        producer.close()
    assert broker.faults() == []
    assert stored_values(broker.bootstrap_servers, "orders") == [b"a"]


def test_a_non_retriable_error_reaches_the_application(broker):
    create_topic(broker.bootstrap_servers, "orders")
    broker.inject_fault("Produce", error="TOPIC_AUTHORIZATION_FAILED", count=1)
    reports = confluent_produce(broker.bootstrap_servers, "orders", [b"a"])
    assert [err.code() for err in reports] == [confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED]

    broker.inject_fault("Produce", error="TOPIC_AUTHORIZATION_FAILED", count=1)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, retries=5)
    try:
        with pytest.raises(kafka.errors.TopicAuthorizationFailedError):
            producer.send("orders", b"b", partition=0).get(timeout=30)
    finally:
        producer.close()
    assert stored_values(broker.bootstrap_servers, "orders") == []


def test_a_delay_is_observed_by_the_client(broker):
    create_topic(broker.bootstrap_servers, "slow")
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    try:
        producer.send("slow", b"warm-up").get(timeout=10)
        broker.inject_fault("Produce", delay_ms=1200, count=1)
        start = time.monotonic()
        producer.send("slow", b"late").get(timeout=10)
        delayed = time.monotonic() - start
        start = time.monotonic()
        producer.send("slow", b"prompt").get(timeout=10)
        prompt = time.monotonic() - start
    finally:
        producer.close()
    assert delayed >= 1.2 and prompt < 1.0


def test_metadata_delay_and_throttle_seen_by_librdkafka(broker):
    create_topic(broker.bootstrap_servers, "throttled")
    throttles = []
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers,
                                         "throttle_cb": lambda event: throttles.append(event.throttle_time)})
    try:
        producer.produce("throttled", b"x")
        assert producer.flush(10) == 0
        broker.inject_fault("Metadata", delay_ms=1500, count=1)
        start = time.monotonic()
        producer.list_topics(timeout=10)
        assert time.monotonic() - start >= 1.5
        broker.inject_fault("Produce", throttle_ms=700, count=1)
        producer.produce("throttled", b"y")
        assert producer.flush(10) == 0
        deadline = time.monotonic() + 5
        while not throttles and time.monotonic() < deadline:
            producer.poll(0.1)
    finally:
        producer.flush(5)
    assert throttles and abs(throttles[0] - 0.7) < 0.01


def test_a_dropped_connection_is_retried_by_the_producer(broker):
    create_topic(broker.bootstrap_servers, "dropped")
    broker.inject_fault("Produce", drop_connection=True, count=2)
    reports = confluent_produce(broker.bootstrap_servers, "dropped", [b"a"], **{"enable.idempotence": True})
    assert reports == [None]
    assert stored_values(broker.bootstrap_servers, "dropped") == [b"a"]
    assert "drops the connection before answering Produce" in broker.log_text()


def test_a_consumer_rides_through_the_broker_being_down_for_two_seconds(broker):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "stream")
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "riders",
                                         "auto.offset.reset": "earliest", "reconnect.backoff.max.ms": 200})
    producer = KafkaProducer(bootstrap_servers=bootstrap, retries=20, retry_backoff_ms=100, reconnect_backoff_max_ms=200)
    seen: list[bytes] = []

    def consume_until(count: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while len(seen) < count and time.monotonic() < deadline:
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                seen.append(message.value())

    try:
        consumer.subscribe(["stream"])
        for n in range(5):
            producer.send("stream", f"before-{n}".encode(), partition=0)
        producer.flush()
        consume_until(5, 30)
        down = broker.inject_fault(down_ms=2000)
        assert down.description["down_ms"] == 2000 and broker.clock()["down_ms"] > 0
        with pytest.raises(ConnectionError):  # new connections are closed at once
            RawClient(bootstrap).request(18, 0, {})
        for n in range(5):
            producer.send("stream", f"after-{n}".encode(), partition=0)
        producer.flush(timeout=30)
        consume_until(10, 30)
    finally:
        consumer.close()
        producer.close()
    assert seen == [f"before-{n}".encode() for n in range(5)] + [f"after-{n}".encode() for n in range(5)]


def _batch(value: bytes) -> bytes:
    return records.encode_batch([records.Record(key=None, value=value, timestamp=int(time.time() * 1000))])


def test_a_partition_fault_fails_only_that_partition_of_a_request(broker):
    create_topic(broker.bootstrap_servers, "split", partitions=2)
    broker.inject_fault("Produce", topic="split", partition=1, error="NOT_LEADER_OR_FOLLOWER", count=1)
    broker.inject_fault("ListOffsets", topic="split", error="LEADER_NOT_AVAILABLE", count=1)
    with RawClient(broker.bootstrap_servers) as client:
        body = client.request(0, 8, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": "split", "partition_data": [{"index": 0, "records": _batch(b"kept")}, {"index": 1, "records": _batch(b"refused")}]},
        ]})
        answers = {p.index: p.error_code for t in body.responses for p in t.partition_responses}
        assert answers == {0: 0, 1: 6}
        listed = client.request(2, 5, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": "split", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]})
        assert listed.topics[0].partitions[0].error_code == 5
        listed = client.request(2, 5, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": "split", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]})
        assert listed.topics[0].partitions[0].error_code == 0 and listed.topics[0].partitions[0].offset == 1
    assert stored_values(broker.bootstrap_servers, "split", 0) == [b"kept"]
    assert stored_values(broker.bootstrap_servers, "split", 1) == []


def test_fault_listing_and_removal(broker):
    first = broker.inject_fault("Metadata", delay_ms=10)
    second = broker.inject_fault(3, error="UNKNOWN_SERVER_ERROR", count=2)
    listed = broker.faults()
    assert [f["id"] for f in listed] == [first.id, second.id]
    assert listed[0] == {"id": first.id, "api": "Metadata", "api_key": 3, "delay_ms": 10, "remaining": None, "fired": 0}
    with RawClient(broker.bootstrap_servers) as client:
        client.request(3, 9, {"topics": [], "allow_auto_topic_creation": False, "include_topic_authorized_operations": False})
    assert broker.faults()[0]["fired"] == 1  # the first matching fault takes the request
    assert first.remove() and not first.remove()
    assert broker.clear_faults() == 1 and broker.faults() == []


@pytest.mark.parametrize("spec, message", [
    ({"api": "Nope", "error": "NOT_LEADER_OR_FOLLOWER"}, "unknown API 'Nope'"),
    ({"api": "Produce", "error": "NOT_AN_ERROR"}, "unknown error 'NOT_AN_ERROR'"),
    ({"api": "Produce", "error": "NONE"}, "not a fault"),
    ({"api": "Produce"}, "needs an action"),
    ({"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "count": 0}, "count must be a whole number >= 1"),
    ({"api": "Produce", "delay_ms": -5}, "delay_ms must be a whole number >= 0"),
    ({"api": "Metadata", "error": "NOT_LEADER_OR_FOLLOWER", "topic": "t"}, "only Produce, Fetch and ListOffsets"),
    ({"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "drop_connection": True}, "not both"),
    ({"down_ms": 0}, "down_ms must be a whole number >= 1"),
])
def test_bad_faults_are_refused_with_a_clear_error(broker, spec, message):
    with pytest.raises(ValueError, match=message):
        broker.inject_fault(**spec)
    assert broker.faults() == []


def _mirrored_every_partition(api, version, request, response) -> bool:
    if api.key == 0:
        topic = "topic_id" if version >= 13 else "name"  # v13 names topics by id
        asked = {(t[topic], p["index"]) for t in request["topic_data"] for p in t["partition_data"]}
        answered = {(t[topic], p["index"]) for t in response["responses"] for p in t["partition_responses"]}
        return asked == answered and all(p["error_code"] == 6 for t in response["responses"] for p in t["partition_responses"])
    return True


def _error_codes(fields, version, value) -> list[int]:
    codes = []
    for f in fields:
        if not f.present_in(version):
            continue
        if f.name == "error_code":
            codes.append(value[f.name])
        elif isinstance(f.type, Array) and isinstance(f.type.item, list):
            for item in value[f.name]:
                codes += _error_codes(f.type.item, version, item)
        elif isinstance(f.type, list) and value[f.name] is not None:
            codes += _error_codes(f.type, version, value[f.name])
    return codes


def test_every_served_api_and_version_has_an_encodable_error_response():
    for key, route in load_handlers().items():
        api = route.api
        for version in range(route.min_version, route.max_version + 1):
            request = Sampler(version, api.request.is_flexible(version), nulls=False).struct(api.request.fields)
            response = error_response(api, version, request, 6)
            api.response.build(response, version)  # encodes
            codes = _error_codes(api.response.fields, version, response)
            assert all(code == 6 for code in codes), (api.name, version)
            assert _mirrored_every_partition(api, version, request, response), (api.name, version)


@pytest.mark.parametrize("client", ["confluent-kafka", "kafka-python"])
def test_a_group_consumer_gets_through_coordinator_and_fetch_errors(broker, client):
    """Injected answers for other APIs, read by the clients' own error handling: the consumer
    looks the coordinator up again, refreshes metadata after NOT_LEADER_OR_FOLLOWER on Fetch,
    and still reads every record once."""
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "feed")
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for n in range(5):
        producer.send("feed", f"r{n}".encode(), partition=0)
    producer.close()
    broker.inject_fault("FindCoordinator", error="COORDINATOR_NOT_AVAILABLE", count=2)
    broker.inject_fault("Fetch", topic="feed", error="NOT_LEADER_OR_FOLLOWER", count=2)
    seen: list[bytes] = []
    deadline = time.monotonic() + 30
    if client == "confluent-kafka":
        consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "g", "auto.offset.reset": "earliest"})
        consumer.subscribe(["feed"])
        while len(seen) < 5 and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                seen.append(message.value())
    else:
        consumer = KafkaConsumer("feed", bootstrap_servers=bootstrap, group_id="g", auto_offset_reset="earliest",
                                 retry_backoff_ms=50)
        while len(seen) < 5 and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=200).values():
                seen += [r.value for r in records]
    consumer.close()
    assert seen == [f"r{n}".encode() for n in range(5)]
    assert broker.faults() == []  # both faults were served to the client


def test_a_throttle_on_a_cached_metadata_answer(broker):
    """Metadata answers are encoded once and cached; a throttle fault still sets the field."""
    request = {"topics": None, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}
    with RawClient(broker.bootstrap_servers) as client:
        assert client.request(3, 9, request).throttle_time_ms == 0
        assert client.request(3, 9, request).throttle_time_ms == 0  # answered from the cache
        broker.inject_fault("Metadata", throttle_ms=250, count=1)
        throttled = client.request(3, 9, request)
        assert throttled.throttle_time_ms == 250 and throttled.cluster_id
        assert client.request(3, 9, request).throttle_time_ms == 0


def test_aiokafka_producer_retries_through_injected_errors(broker):
    import asyncio

    import aiokafka

    create_topic(broker.bootstrap_servers, "orders")
    broker.inject_fault("Produce", error="NOT_LEADER_OR_FOLLOWER", count=2)

    async def send() -> int:
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers, retry_backoff_ms=50)
        await producer.start()
        try:
            return (await producer.send_and_wait("orders", b"a", partition=0)).offset
        finally:
            await producer.stop()

    assert asyncio.run(send()) == 0
    assert broker.faults() == []
    assert stored_values(broker.bootstrap_servers, "orders") == [b"a"]


@pytest.mark.parametrize("api_key,version,body,path", [
    # requests that list partitions as plain integers: every one is answered with the error
    (24, 3, {"v3_and_below_transactional_id": "t", "v3_and_below_producer_id": 1, "v3_and_below_producer_epoch": 0,
             "v3_and_below_topics": [{"name": "t1", "partitions": [0, 2]}]},
     ("results_by_topic_v3_and_below", "results_by_partition", "partition_error_code")),
    (9, 5, {"group_id": "g", "topics": [{"name": "t1", "partition_indexes": [0, 2]}]},
     ("topics", "partitions", "error_code")),
])
def test_an_injected_error_answers_each_partition_listed_as_an_integer(broker, api_key, version, body, path):
    from trafka.testing.rawwire import RawClient
    from trafka.wire.messages import APIS

    with broker.inject_fault(APIS[api_key].name, error="NOT_COORDINATOR", count=1):
        with RawClient(broker.bootstrap_servers, "faults") as raw:
            answer = raw.request(api_key, version, body)
    topics, partitions, error = path
    (topic,) = getattr(answer, topics)
    assert topic.name == "t1"
    assert [(p.partition_index, getattr(p, error)) for p in getattr(topic, partitions)] == [(0, 16), (2, 16)]
