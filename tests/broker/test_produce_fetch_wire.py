"""Produce, Fetch and CreateTopics edge cases that clients hide, spoken byte for byte."""

from __future__ import annotations

import threading
import time

import pytest

from trafka.testing.rawwire import RawClient
from trafka.wire import records

PRODUCE_V, FETCH_V, METADATA_V, CREATE_V = 8, 11, 9, 5


def batch(*values: bytes) -> bytes:
    return records.encode_batch([records.Record(key=None, value=v, timestamp=int(time.time() * 1000)) for v in values])


def produce_body(topic: str, data: bytes, acks: int = -1) -> dict:
    return {
        "transactional_id": None,
        "acks": acks,
        "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": data}]}],
    }


def fetch_body(topic: str, offset: int, *, max_wait_ms: int = 0, min_bytes: int = 0) -> dict:
    return {
        "replica_id": -1,
        "max_wait_ms": max_wait_ms,
        "min_bytes": min_bytes,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [{"topic": topic, "partitions": [{"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}]}],
        "forgotten_topics_data": [],
        "rack_id": "",
    }


def create(client: RawClient, name: str, *, validate_only: bool = False, configs: dict | None = None):
    body = client.request(19, CREATE_V, {
        "topics": [{
            "name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [],
            "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()],
        }],
        "timeout_ms": 5000,
        "validate_only": validate_only,
    })
    return body.topics[0]


def partition_of(fetch_response):
    return fetch_response.responses[0].partitions[0]


def topic_names(client: RawClient) -> set[str]:
    body = client.request(3, METADATA_V, {"topics": None, "allow_auto_topic_creation": False})
    return {t.name for t in body.topics}


@pytest.fixture
def client(trafka_broker):
    with RawClient(trafka_broker.bootstrap_servers, "wire-edges") as c:
        yield c


def test_acks_0_gets_no_response_but_is_stored(client):
    assert create(client, "quiet").error_code == 0
    client.send(client.frame(0, PRODUCE_V, produce_body("quiet", batch(b"fire", b"forget"), acks=0)))
    # The next answer on this connection belongs to the next request: nothing came for acks=0.
    metadata_frame = client.frame(3, METADATA_V, {"topics": None, "allow_auto_topic_creation": False})
    body = client.send_frame(3, METADATA_V, metadata_frame)
    assert "quiet" in {t.name for t in body.topics}
    fetched = partition_of(client.request(1, FETCH_V, fetch_body("quiet", 0)))
    assert fetched.high_watermark == 2
    assert [r.value for r in records.decode_records(fetched.records)] == [b"fire", b"forget"]


def test_corrupt_batch_is_refused_and_nothing_is_stored(client):
    assert create(client, "crc").error_code == 0
    data = bytearray(batch(b"payload"))
    data[-1] ^= 0xFF  # the CRC covers it
    answer = client.request(0, PRODUCE_V, produce_body("crc", bytes(data)))
    assert answer.responses[0].partition_responses[0].error_code == 2  # CORRUPT_MESSAGE
    assert partition_of(client.request(1, FETCH_V, fetch_body("crc", 0))).high_watermark == 0
    ok = client.request(0, PRODUCE_V, produce_body("crc", batch(b"fine")))
    assert ok.responses[0].partition_responses[0].base_offset == 0


def test_produce_to_unknown_topic_or_partition(client):
    answer = client.request(0, PRODUCE_V, produce_body("never-created", batch(b"x")))
    assert answer.responses[0].partition_responses[0].error_code == 3  # UNKNOWN_TOPIC_OR_PARTITION
    assert "never-created" not in topic_names(client)  # Produce does not auto-create, as in Kafka


def test_fetch_out_of_range(client):
    assert create(client, "range").error_code == 0
    client.request(0, PRODUCE_V, produce_body("range", batch(b"a", b"b")))
    answer = partition_of(client.request(1, FETCH_V, fetch_body("range", 5)))
    assert (answer.error_code, answer.high_watermark, answer.log_start_offset) == (1, 2, 0)


def test_long_poll_waits_for_max_wait_then_wakes_on_new_data(client, trafka_broker):
    """Only lower bounds on time (a slower machine only waits longer): the empty fetch waited its
    max_wait_ms; the second, whose max_wait_ms is longer than the client's socket timeout, can
    only have returned because the append woke it."""
    assert create(client, "poll").error_code == 0
    started = time.monotonic()
    empty = partition_of(client.request(1, FETCH_V, fetch_body("poll", 0, max_wait_ms=400, min_bytes=1)))
    waited = time.monotonic() - started
    assert empty.records in (b"", None) and waited >= 0.35

    def produce_later():
        time.sleep(0.3)
        with RawClient(trafka_broker.bootstrap_servers, "late-producer") as producer:
            producer.request(0, PRODUCE_V, produce_body("poll", batch(b"wake")))

    threading.Thread(target=produce_later).start()
    started = time.monotonic()
    woken = partition_of(client.request(1, FETCH_V, fetch_body("poll", 0, max_wait_ms=600_000, min_bytes=1)))
    waited = time.monotonic() - started
    assert [r.value for r in records.decode_records(woken.records)] == [b"wake"]
    assert waited >= 0.25  # it did wait for the append


def test_create_topics_validate_only_and_config_errors(client):
    answer = create(client, "dry-run", validate_only=True, configs={"retention.ms": "1000"})
    assert answer.error_code == 0
    assert "dry-run" not in topic_names(client)
    bad = create(client, "bad-config", configs={"retention.ms": "soon"})
    assert bad.error_code == 40 and "retention.ms" in bad.error_message  # INVALID_CONFIG
    assert create(client, "bad..name/x").error_code == 17  # INVALID_TOPIC_EXCEPTION


@pytest.mark.parametrize("topic", ["__consumer_offsets", "__transaction_state", "__share_group_state"])
def test_clients_cannot_write_to_internal_topics(client, topic):
    """Kafka's Topic.isInternal: the coordinators' three topics."""
    client.request(3, METADATA_V, {"topics": None, "allow_auto_topic_creation": False})
    answer = client.request(0, PRODUCE_V, produce_body(topic, batch(b"forged")))
    assert answer.responses[0].partition_responses[0].error_code == 17  # INVALID_TOPIC_EXCEPTION
