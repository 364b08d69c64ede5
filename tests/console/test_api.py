"""The JSON API and /metrics, checked against what real clients did; bad input is a 4xx with a
message, never a 500."""

import json
import urllib.error
import urllib.request

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.structs import OffsetAndMetadata, TopicPartition


def call(broker, method, path, body=None, raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(broker.console_url + path.lstrip("/"), data=data, method=method,
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def get_json(broker, path):
    status, text = call(broker, "GET", path)
    assert status == 200, text
    return json.loads(text)


@pytest.fixture
def used(broker):
    """A topic with 3 partitions that kafka-python produced to and a group that committed."""
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    admin.create_topics([NewTopic("orders", 3, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    for i in range(10):
        producer.send("orders", value=b"v%d" % i, partition=i % 3)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id="billing", enable_auto_commit=False)
    consumer.commit({TopicPartition("orders", 0): OffsetAndMetadata(2, "", -1),
                     TopicPartition("orders", 1): OffsetAndMetadata(3, "", -1)})
    consumer.close()
    return broker


def test_cluster_has_the_shape_of_the_issue_and_what_the_clients_did(used):
    cluster = get_json(used, "api/v1/cluster")
    orders = next(t for t in cluster["topics"] if t["name"] == "orders")
    by_partition = {p["partition"]: p for p in orders["partitions"]}
    assert sorted(by_partition) == [0, 1, 2]
    assert [by_partition[i]["log_end_offset"] for i in range(3)] == [4, 3, 3]  # 10 records, round robin
    for p in orders["partitions"]:
        assert {"partition", "log_start_offset", "last_stable_offset", "log_end_offset", "segments"} <= set(p)
        assert p["log_start_offset"] == 0 and p["last_stable_offset"] == p["log_end_offset"]
        assert p["segments"][0]["base_offset"] == 0 and p["segments"][0]["size"] > 0
    billing = next(g for g in cluster["groups"] if g["group_id"] == "billing")
    assert billing["state"] == "Empty"
    assert billing["offsets"] == [
        {**billing["offsets"][0], "topic": "orders", "partition": 0, "committed_offset": 2, "lag": 2},
        {**billing["offsets"][1], "topic": "orders", "partition": 1, "committed_offset": 3, "lag": 0},
    ]
    assert {"group_id", "state", "offsets"} <= set(billing)


def test_records_from_an_offset_and_from_a_timestamp(used):
    page = get_json(used, "api/v1/topics/orders/partitions/0/records?offset=1&limit=2")
    assert [r["value"] for r in page["records"]] == ["v3", "v6"]
    assert page["next_offset"] == 3
    first = get_json(used, "api/v1/topics/orders/partitions/0/records")["records"][0]
    later = get_json(used, f"api/v1/topics/orders/partitions/0/records?timestamp={first['timestamp'] + 10**9}")
    assert later["records"] == [] and later["from_offset"] == 4
    assert get_json(used, "api/v1/topics/orders/partitions/0/records?format=hex&limit=1")["records"][0]["value"] == "76 30"


def test_metrics_match_what_the_clients_did(used):
    consumer = KafkaConsumer(bootstrap_servers=used.bootstrap_servers, auto_offset_reset="earliest", consumer_timeout_ms=2000)
    consumer.assign([TopicPartition("orders", 2)])
    assert len(list(consumer)) == 3
    consumer.close()
    status, text = call(used, "GET", "metrics")
    assert status == 200
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    assert samples['trafka_partition_log_end_offset{partition="0",topic="orders"}'] == 4
    assert samples['trafka_group_lag{group="billing",partition="0",topic="orders"}'] == 2
    assert samples['trafka_group_committed_offset{group="billing",partition="1",topic="orders"}'] == 3
    assert samples['trafka_requests_total{api="Produce"}'] >= 1
    assert samples['trafka_request_duration_seconds_count{api="Produce"}'] == samples['trafka_requests_total{api="Produce"}']
    assert samples['trafka_topic_bytes_in_total{topic="orders"}'] > 10 * 2  # 10 values of 2 bytes, plus batch framing
    assert samples['trafka_topic_bytes_out_total{topic="orders"}'] > 0
    size = samples['trafka_partition_size_bytes{partition="2",topic="orders"}']
    assert size == get_json(used, "api/v1/topics/orders/partitions/2")["size"]


BAD_REQUESTS = [
    ("GET", "api/v1/topics/nope", None, 404, "unknown topic 'nope'"),
    ("GET", "api/v1/topics/nope/partitions/0", None, 404, "unknown topic"),
    ("GET", "api/v1/topics/orders/partitions/7", None, 404, "has no partition 7"),
    ("GET", "api/v1/topics/orders/partitions/-1", None, 404, "Not Found"),
    ("GET", "api/v1/topics/orders/partitions/99999999999999999999", None, 404, "has no partition"),
    ("GET", "api/v1/topics/orders/partitions/0/records?offset=-5", None, 400, "offset must be at least 0"),
    ("GET", "api/v1/topics/orders/partitions/0/records?offset=abc", None, 400, "offset must be an integer"),
    ("GET", "api/v1/topics/orders/partitions/0/records?limit=100000000", None, 400, "limit must be at most 500"),
    ("GET", "api/v1/topics/orders/partitions/0/records?limit=0", None, 400, "limit must be at least 1"),
    ("GET", "api/v1/topics/orders/partitions/0/records?timestamp=-1", None, 400, "timestamp must be at least 0"),
    ("GET", "api/v1/topics/orders/partitions/0/records?offset=1&timestamp=1", None, 400, "not both"),
    ("GET", "api/v1/topics/orders/partitions/0/records?format=xml", None, 400, "format must be one of"),
    ("GET", "api/v1/groups/nobody", None, 404, "unknown group 'nobody'"),
    ("GET", "api/v1/stream/groups/nobody", None, 404, "unknown group"),
    ("GET", "api/v1/stream/topics/nope/partitions/0", None, 404, "unknown topic"),
    ("GET", "api/v1/nothing-here", None, 404, "Not Found"),
    ("POST", "api/v1/cluster", b"{}", 405, "Method Not Allowed"),
    ("POST", "api/v1/topics", b"{not json", 400, "not JSON"),
    ("POST", "api/v1/topics", b"[1, 2]", 400, "must be a JSON object"),
    ("POST", "api/v1/topics", b'{"partitions": 1}', 400, "create takes"),
    ("POST", "api/v1/topics", b'{"name": "x", "partitions": -5}', 400, "partitions must be at least -1"),
    ("POST", "api/v1/topics", b'{"name": "x", "partitions": 100000000}', 400, "partitions must be at most"),
    ("POST", "api/v1/topics", b'{"name": "x", "partitions": "many"}', 400, "partitions must be an integer"),
    ("POST", "api/v1/topics", b'{"name": "orders"}', 409, "TOPIC_ALREADY_EXISTS"),
    ("POST", "api/v1/topics", b'{"name": "bad/name"}', 409, "INVALID_TOPIC_EXCEPTION"),
    ("POST", "api/v1/topics", b'{"name": "x", "configs": {"retention.ms": "soon"}}', 409, "INVALID_CONFIG"),
    ("POST", "api/v1/topics", b'{"name": "x", "configs": [1]}', 400, "configs must be an object"),
    ("DELETE", "api/v1/topics/nope", None, 404, "unknown topic"),
    ("POST", "api/v1/topics/orders/partitions/0/records", b"{oops", 400, "not JSON"),
    ("POST", "api/v1/topics/orders/partitions/0/records", b'{"colour": "red"}', 400, "unknown fields"),
    ("POST", "api/v1/topics/orders/partitions/0/records", b'{"headers": [1]}', 400, "headers must be an object"),
    ("POST", "api/v1/topics/orders/partitions/9/records", b'{"value": "x"}', 404, "has no partition 9"),
    ("POST", "api/v1/topics/nope/partitions/0/records", b'{"value": "x"}', 404, "unknown topic"),
    ("POST", "api/v1/topics/orders/partitions/0/delete-records", b"{}", 400, "delete-records takes"),
    ("POST", "api/v1/topics/orders/partitions/0/delete-records", b'{"offset": -7}', 400, "offset must be at least -1"),
    ("POST", "api/v1/topics/orders/partitions/0/delete-records", b'{"offset": 1e30}', 400, "offset must be at most"),
    ("POST", "api/v1/topics/orders/partitions/0/delete-records", b'{"offset": 99}', 409, "OFFSET_OUT_OF_RANGE"),
    ("POST", "api/v1/topics/orders/partitions/0/delete-records", b'{"offset": true}', 400, "must be an integer"),
    ("POST", "api/v1/groups/billing/reset-offsets", b'{"to": "yesterday"}', 400, "reset-offsets takes"),
    ("POST", "api/v1/groups/billing/reset-offsets", b'{"to": "offset", "offset": -3}', 400, "offset must be at least 0"),
    ("POST", "api/v1/groups/billing/reset-offsets", b'{"to": "offset"}', 400, "offset must be an integer"),
    ("POST", "api/v1/groups/billing/reset-offsets", b'{"to": "earliest", "topic": "nope"}', 404, "unknown topic"),
    ("POST", "api/v1/groups/nobody/reset-offsets", b'{"to": "earliest"}', 404, "unknown group"),
    ("POST", "api/v1/groups/billing/reset-offsets", b"\xff\xfe", 400, "not JSON"),
    ("GET", "topics/nope/partitions/0", None, 404, "unknown topic"),
    ("GET", "topics/orders/partitions/5/records", None, 404, "has no partition 5"),
    ("GET", "groups/nobody", None, 404, "unknown group"),
]


def test_bad_input_to_every_endpoint_is_a_4xx_with_a_message(used):
    for method, path, raw, status, message in BAD_REQUESTS:
        got, text = call(used, method, path, raw=raw)
        assert (got, message in text) == (status, True), f"{method} {path} {raw!r}: {got} {text}"
        assert "Traceback" not in text
    assert "Traceback" not in used.log_text()
    assert "internal error" not in used.log_text()


def test_reset_offsets_of_a_group_with_members_is_refused(used):
    consumer = KafkaConsumer("orders", bootstrap_servers=used.bootstrap_servers, group_id="billing", consumer_timeout_ms=1500)
    list(consumer)
    status, text = call(used, "POST", "api/v1/groups/billing/reset-offsets", {"to": "earliest"})
    consumer.close()
    assert status == 409 and "only while it is Empty" in text
    status, text = call(used, "POST", "api/v1/groups/billing/reset-offsets", {"to": "timestamp", "timestamp": 0})
    assert status == 200, text
    assert {(o["partition"], o["committed_offset"]) for o in json.loads(text)["offsets"]} == {(0, 0), (1, 0), (2, 0)}


def test_a_groups_rebalances_since_start(broker):
    consumer = KafkaConsumer("jobs", bootstrap_servers=broker.bootstrap_servers, group_id="workers",
                             client_id="worker-1", consumer_timeout_ms=1000)
    list(consumer)
    consumer.close()
    history = get_json(broker, "api/v1/groups/workers")["rebalances"]
    steps = [(h["previous_state"], h["state"], h["generation"]) for h in history]
    assert steps[:3] == [("Empty", "PreparingRebalance", 0), ("PreparingRebalance", "CompletingRebalance", 1),
                         ("CompletingRebalance", "Stable", 1)]
    assert steps[-1][1] == "Empty"  # it left
    assert "joined" in history[0]["reason"] and history[1]["members"] == ["worker-1"]
    assert [h["rebalance"] for h in history[:3]] == [True, True, False]


def test_a_huge_body_is_refused_and_garbage_http_closes_quietly(broker):
    import socket
    from urllib.parse import urlsplit

    status, text = call(broker, "POST", "api/v1/topics", raw=b"{" + b" " * (3 << 20) + b"}")
    assert status == 413 and "larger than 1 MiB" in text
    url = urlsplit(broker.console_url)
    for garbage in (b"\x00\x01\x02 not http\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                    b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n"):
        with socket.create_connection((url.hostname, url.port), timeout=5) as sock:
            sock.sendall(garbage)
            answer = sock.recv(200)
            assert answer == b"" or answer.startswith(b"HTTP/1.1 4"), answer
    assert get_json(broker, "health")["status"] == "ok"
    assert "Traceback" not in broker.log_text()


def test_connections_show_the_software_each_client_reported(broker):
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "client.id": "cf-1"})
    producer.produce("sw", b"x")
    assert producer.flush(10) == 0
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, client_id="kp-1")
    consumer.topics()
    connections = get_json(broker, "api/v1/broker")["connections"]
    software = {c["client_id"]: (c["software_name"], c["software_version"]) for c in connections}
    assert software["cf-1"][0] == "confluent-kafka-python" and "rdkafka" in software["cf-1"][1]
    assert software["kp-1"][0] == "kafka-python"
    consumer.close()
    status, text = call(broker, "GET", "metrics")
    assert "trafka_connections " in text


def test_reset_an_empty_groups_offsets_to_earliest_latest_and_an_offset(used):
    def reset(**body):
        status, text = call(used, "POST", "api/v1/groups/billing/reset-offsets", body)
        assert status == 200, text
        return {(o["topic"], o["partition"]): o["committed_offset"] for o in json.loads(text)["offsets"]}

    assert reset(to="latest") == {("orders", 0): 4, ("orders", 1): 3}
    assert reset(to="offset", offset=1) == {("orders", 0): 1, ("orders", 1): 1}
    assert reset(to="offset", offset=99, topic="orders") == {("orders", 0): 4, ("orders", 1): 3}  # clamped to the end
    call(used, "POST", "api/v1/topics/orders/partitions/0/delete-records", {"offset": 2})
    assert reset(to="earliest") == {("orders", 0): 2, ("orders", 1): 0}
    # What a real client sees afterwards.
    consumer = KafkaConsumer(bootstrap_servers=used.bootstrap_servers, group_id="billing", enable_auto_commit=False)
    committed = {p: consumer.committed(TopicPartition("orders", p)) for p in (0, 1)}
    consumer.close()
    assert committed == {0: 2, 1: 0}


def test_a_consumer_protocol_groups_history_since_start(broker):
    """KIP-848 groups have a history too: each state change and group epoch, as the coordinator
    installed them."""
    from confluent_kafka import Consumer

    from testkit.groups import create_topic

    create_topic(broker.bootstrap_servers, "jobs", 2)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "modern",
                         "group.protocol": "consumer", "client.id": "modern-1"})
    consumer.subscribe(["jobs"])
    from trafka.testing.waiting import wait_until

    def assigned():
        consumer.poll(0.2)
        return consumer.assignment()
    wait_until(assigned, timeout=15, message="an assignment")
    consumer.close()
    described = get_json(broker, "api/v1/groups/modern")
    assert described["group_type"] == "consumer"
    history = described["rebalances"]
    assert history[0]["previous_state"] == "Empty" and history[0]["generation"] == 1
    assert history[0]["members"] == ["modern-1"] and history[0]["rebalance"] is True
    assert any(h["state"] == "Stable" for h in history)
    assert history[-1]["state"] == "Empty"  # it left


def test_console_and_cli_agree_on_lag_even_past_the_end(used):
    """One description of a group for the console and `trafka groups`: lag is Kafka's
    (log end minus committed), negative for a commit past the end, in both."""
    import subprocess
    import sys

    consumer = KafkaConsumer(bootstrap_servers=used.bootstrap_servers, group_id="billing", enable_auto_commit=False)
    consumer.commit({TopicPartition("orders", 2): OffsetAndMetadata(9, "", -1)})  # partition 2 holds 3 records
    consumer.close()
    lags = {o["partition"]: o["lag"] for o in get_json(used, "api/v1/groups/billing")["offsets"]}
    assert lags == {0: 2, 1: 0, 2: -6}
    out = subprocess.run([sys.executable, "-m", "trafka", "groups", "--data-dir", str(used.data_dir), "--group", "billing"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines() if line.startswith("billing") and " orders " in f" {line} "]
    assert {int(r[2]): int(r[5]) for r in rows} == lags
