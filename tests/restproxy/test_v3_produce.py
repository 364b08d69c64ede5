"""API v3's produce (POST /v3/clusters/{c}/topics/{t}/records): one record or a stream of
them per body, one answer per record; every format; what Kafka clients read back; bad input
answered with an error and nothing written."""

from __future__ import annotations

import base64
import json

from confluent_kafka import Consumer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from kafka import KafkaProducer

from tests.restproxy.conftest import answers_of, read_back

USER = json.dumps({"type": "record", "name": "User", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": ["null", "int"], "default": None}]})


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def consume_all(broker, topic: str, count: int, timeout: float = 20.0) -> list:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": f"check-{topic}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    out = []
    import time

    deadline = time.monotonic() + timeout
    while len(out) < count and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            out.append(message)
    consumer.close()
    return out


def registry_subjects(broker) -> list[str]:
    return SchemaRegistryClient({"url": broker.schema_registry_url}).get_subjects()


def test_one_record_answer_shape(proxy):
    proxy.create_topic("one")
    answer = proxy.post(f"{proxy.cluster}/topics/one/records",
                        json={"key": {"type": "STRING", "data": "k1"}, "value": {"type": "JSON", "data": {"n": 1}},
                              "headers": [{"name": "h", "value": b64(b"hv")}], "timestamp": "2024-01-02T03:04:05.678Z"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    body = answer.json()
    cid = proxy.cluster.rsplit("/", 1)[1]
    assert body == {"error_code": 200, "cluster_id": cid, "topic_name": "one", "partition_id": 0, "offset": 0,
                    "timestamp": "2024-01-02T03:04:05.678Z", "key": {"type": "STRING", "size": 2},
                    "value": {"type": "JSON", "size": 7}}
    only = proxy.produce("one", [{"value": {"data": b64(b"raw")}}])[0]
    assert "key" not in only and only["value"] == {"type": "BINARY", "size": 3} and only["offset"] == 1


def test_streamed_records_read_back_by_kafka_clients(proxy, broker):
    proxy.create_topic("stream", 4)
    sent = {}
    for round_ in range(20):
        records = [{"key": {"type": "STRING", "data": f"key-{i % 37}"},
                    "value": {"type": "BINARY", "data": b64(f"value-{round_}-{i}".encode())}} for i in range(150)]
        answers = proxy.produce("stream", records)
        assert len(answers) == 150 and {a["error_code"] for a in answers} == {200}
        for record, a in zip(records, answers):
            sent[(a["partition_id"], a["offset"])] = (record["key"]["data"].encode(), base64.b64decode(record["value"]["data"]))
    assert len(sent) == 3000
    read = {(m.partition, m.offset): (m.key, m.value) for m in read_back(broker.bootstrap_servers, "stream", len(sent))}
    assert read == sent
    # Keys go where Kafka's default partitioner (murmur2, as kafka-python's and Java's) puts them.
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    placed = {key: producer.send("stream", key=key.encode(), value=b"x").get(10).partition
              for key in ("key-0", "key-1", "key-2", "key-3", "key-4", "key-36")}
    producer.close()
    by_key = {k.decode(): p for (p, _), (k, _) in sent.items()}
    assert all(by_key[k] == p for k, p in placed.items())


def test_partition_id_and_null_values(proxy, broker):
    proxy.create_topic("placed", 3)
    answers = proxy.produce("placed", [{"partition_id": 2, "value": {"type": "JSON", "data": None}},
                                       {"partition_id": 1, "key": {"type": "JSON", "data": [1, 2]}}])
    assert [(a["partition_id"], a["offset"]) for a in answers] == [(2, 0), (1, 0)]
    got = {m.partition(): (m.key(), m.value()) for m in consume_all(broker, "placed", 2)}
    assert got == {2: (None, None), 1: (b"[1,2]", None)}


def test_avro_and_json_schema_read_by_confluent_deserializers(proxy, broker):
    proxy.create_topic("users")
    first = proxy.produce("users", [{"value": {"type": "AVRO", "schema": USER, "data": {"name": "ann", "age": {"int": 30}}}}])[0]
    assert first["error_code"] == 200
    schema_id = first["value"]["schema_id"]
    assert first["value"] == {"type": "AVRO", "subject": "users-value", "schema_id": schema_id, "schema_version": 1,
                              "size": first["value"]["size"]}
    more = proxy.produce("users", [{"value": {"schema_id": schema_id, "data": {"name": "bob", "age": None}}},
                                   {"value": {"type": "AVRO", "data": {"name": "cy", "age": 7}}},
                                   {"value": {"type": "AVRO", "subject": "users-value", "schema_version": 1,
                                              "data": {"name": "di"}}}])
    assert [a["error_code"] for a in more] == [200, 200, 200]
    assert {a["value"]["schema_id"] for a in more} == {schema_id}

    registry = SchemaRegistryClient({"url": broker.schema_registry_url})
    avro = AvroDeserializer(registry)
    values = [avro(m.value(), SerializationContext("users", MessageField.VALUE)) for m in consume_all(broker, "users", 4)]
    assert values == [{"name": "ann", "age": 30}, {"name": "bob", "age": None}, {"name": "cy", "age": 7},
                      {"name": "di", "age": None}]

    by_record = proxy.produce("users", [
        {"value": {"type": "AVRO", "subject_name_strategy": "RECORD_NAME", "schema": USER, "data": {"name": "ed"}}},
        {"value": {"schema_id": schema_id, "subject_name_strategy": "TOPIC_RECORD_NAME", "data": {"name": "flo"}}},
        {"value": {"type": "AVRO", "subject_name_strategy": "RECORD_NAME", "data": {"name": "gus"}}},
        {"value": {"type": "AVRO", "subject_name_strategy": "NO_SUCH", "schema": USER, "data": {"name": "hal"}}}])
    assert by_record[0]["value"]["subject"] == "User" and by_record[0]["value"]["schema_id"] == schema_id
    # users-User holds no version of it: the answer names the subject and no version
    assert by_record[1]["value"]["subject"] == "users-User" and "schema_version" not in by_record[1]["value"]
    assert [a["error_code"] for a in by_record[2:]] == [400, 400]
    assert "User" in registry_subjects(broker)

    proxy.create_topic("events")
    schema = json.dumps({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]})
    written = proxy.produce("events", [{"value": {"type": "JSONSCHEMA", "schema": schema, "data": {"id": 5}}}])[0]
    assert written["error_code"] == 200 and written["value"]["type"] == "JSONSCHEMA"
    refused = proxy.produce("events", [{"value": {"type": "JSONSCHEMA", "data": {"id": "five"}}}])[0]
    assert refused["error_code"] == 42203
    json_schema = JSONDeserializer(schema, schema_registry_client=registry)
    (message,) = consume_all(broker, "events", 1)
    assert json_schema(message.value(), SerializationContext("events", MessageField.VALUE)) == {"id": 5}


def test_bad_records_get_errors_and_nothing_is_written(proxy):
    proxy.create_topic("strict", 2)
    bad = [
        {"value": {"type": "BINARY", "data": "not base64!"}},
        {"value": {"type": "NOPE", "data": 1}},
        {"value": {"type": "PROTOBUF", "data": {}}},
        {"value": {"type": "AVRO", "data": {"name": 1}}},  # no schema registered for strict-value
        {"value": {"type": "AVRO", "schema": "{\"type\": \"int\"}", "data": "text"}},
        {"value": {"type": "STRING", "data": 5}},
        {"partition_id": 7, "value": {"type": "JSON", "data": 1}},
        {"timestamp": "yesterday", "value": {"type": "JSON", "data": 1}},
        [1, 2],
    ]
    answers = proxy.produce("strict", bad)
    assert len(answers) == len(bad)
    assert all(a["error_code"] != 200 and a["message"] for a in answers), answers
    assert answers[3]["error_code"] == 40401 and answers[4]["error_code"] == 42203
    assert answers[6]["error_code"] == 40402
    broken = proxy.post(f"{proxy.cluster}/topics/strict/records",
                        data='{"value": {"type": "JSON", "data": 1}} {"value": ', headers={"Content-Type": "application/json"})
    assert broken.status_code == 200
    first, error = answers_of(broken)
    assert first["error_code"] == 200 and error["error_code"] == 400
    assert proxy.end_offsets("strict", 2) in ([1, 0], [0, 1])

    unknown = proxy.produce("no-such-topic", [{"value": {"type": "JSON", "data": 1}}])
    assert unknown == [{"error_code": 40401, "message": "Topic not found."}]
    assert "no-such-topic" not in proxy.get("/topics").json()
    empty = proxy.post(f"{proxy.cluster}/topics/strict/records", data="", headers={"Content-Type": "application/json"})
    assert empty.status_code == 400
    for content_type in ("application/x-www-form-urlencoded", "text/plain", "application/vnd.kafka.json.v2+json"):
        refused = proxy.post(f"{proxy.cluster}/topics/strict/records", data='{"value": {"type": "JSON", "data": 1}}',
                             headers={"Content-Type": content_type})
        assert refused.status_code == 415 and refused.json() == {"error_code": 415, "message": "HTTP 415 Unsupported Media Type"}
    assert proxy.end_offsets("strict", 2) in ([1, 0], [0, 1])


def test_huge_bodies_are_refused(proxy):
    proxy.create_topic("big")
    huge = json.dumps({"value": {"type": "BINARY", "data": "A" * (65 * 1024 * 1024)}})
    answer = proxy.post(f"{proxy.cluster}/topics/big/records", data=huge, headers={"Content-Type": "application/json"})
    assert answer.status_code == 413 and answer.json()["error_code"] == 413
    too_big_record = proxy.produce("big", [{"value": {"type": "BINARY", "data": b64(b"x" * 2_000_000)}}])[0]
    assert too_big_record["error_code"] == 40002
    assert proxy.end_offsets("big", 1) == [0]


def test_a_chunked_stream_of_records(proxy, broker):
    """Confluent's streaming mode as clients send it: a chunked body, records split across chunks."""
    proxy.create_topic("chunked", 2)

    def body():
        for i in range(2000):
            text = json.dumps({"value": {"type": "JSON", "data": {"i": i}}})
            yield text[:10].encode()
            yield text[10:].encode() + b"\n"

    answer = proxy.post(f"{proxy.cluster}/topics/chunked/records", data=body(), headers={"Content-Type": "application/json"})
    assert answer.status_code == 200
    written = answers_of(answer)
    assert len(written) == 2000 and {w["error_code"] for w in written} == {200}
    read = {(m.partition, m.offset): json.loads(m.value)["i"] for m in read_back(broker.bootstrap_servers, "chunked", 2000)}
    assert read == {(w["partition_id"], w["offset"]): i for i, w in enumerate(written)}


def test_batch_produce(proxy, broker):
    proxy.create_topic("batched", 2)
    entries = [{"id": f"e{i}", "partition_id": i % 2, "value": {"type": "JSON", "data": {"i": i}}} for i in range(500)]
    entries.append({"id": "bad", "value": {"type": "BINARY", "data": "%%%"}})
    answer = proxy.post(f"{proxy.cluster}/topics/batched/records:batch", json={"entries": entries})
    assert answer.status_code == 207, answer.text
    body = answer.json()
    assert [f["id"] for f in body["failures"]] == ["bad"] and body["failures"][0]["error_code"] == 42201
    assert [s["id"] for s in body["successes"]] == [f"e{i}" for i in range(500)]
    first = body["successes"][0]
    assert (first["topic_name"], first["partition_id"], first["offset"], first["value"]["type"]) == ("batched", 0, 0, "JSON")
    read = {(m.partition, m.offset): json.loads(m.value)["i"] for m in read_back(broker.bootstrap_servers, "batched", 500)}
    assert read == {(s["partition_id"], s["offset"]): int(s["id"][1:]) for s in body["successes"]}
    for refused in ({"entries": []}, {"entries": [{"id": "a"}, {"id": "a"}]}, {"entries": [{"value": {}}]}, {}):
        answer = proxy.post(f"{proxy.cluster}/topics/batched/records:batch", json=refused)
        assert answer.status_code == 400, refused
    assert sum(proxy.end_offsets("batched", 2)) == 500


class ChunkedLines:
    """The JSON lines of a chunked HTTP answer, read from a socket as they arrive."""

    def __init__(self, sock):
        self.sock, self.raw, self.body, self.head = sock, b"", b"", None

    def line(self) -> dict:
        while b"\n" not in self.body:
            if self.head is None and b"\r\n\r\n" in self.raw:
                self.head, _, self.raw = self.raw.partition(b"\r\n\r\n")
                continue
            if self.head is not None and b"\r\n" in self.raw:
                size_line, _, rest = self.raw.partition(b"\r\n")
                size = int(size_line, 16)
                if len(rest) >= size + 2:
                    self.body, self.raw = self.body + rest[:size], rest[size + 2:]
                    continue
            data = self.sock.recv(65536)
            assert data, "the connection closed"
            self.raw += data
        line, _, self.body = self.body.partition(b"\n")
        return json.loads(line)


def test_a_stream_is_answered_record_by_record_while_it_is_open(proxy, broker):
    """One request held open: each record's answer comes back before the next record is sent,
    values split anywhere across chunks (mid-string, mid-number, mid-literal) included."""
    import socket
    from urllib.parse import urlsplit

    proxy.create_topic("live")
    url = urlsplit(proxy.url)
    sock = socket.create_connection((url.hostname, url.port), timeout=10)
    sock.sendall(f"POST {proxy.cluster}/topics/live/records HTTP/1.1\r\nHost: {url.netloc}\r\n"
                 "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode())

    def chunk(data: bytes) -> None:
        sock.sendall(b"%x\r\n%s\r\n" % (len(data), data))

    answers = ChunkedLines(sock)

    def next_answer() -> dict:
        answer = answers.line()
        assert answers.head.startswith(b"HTTP/1.1 200")
        return answer

    try:
        for i in range(5):
            record = json.dumps({"value": {"type": "JSON", "data": {"n": 12345 + i, "ok": True, "s": "x" * i}}}).encode()
            marks = [b"rue", b"34", b"\"xx"]  # cut inside a literal, a number, a string
            cut = record.index(marks[i % 3]) + 1
            chunk(record[:cut])
            chunk(record[cut:])
            answer = next_answer()
            assert (answer["error_code"], answer["offset"]) == (200, i), answer
        chunk(b'{"value": {"type": "JSON", "data": tru')
        chunk(b"x}}")
        assert next_answer()["error_code"] == 400
        sock.sendall(b"0\r\n\r\n")
    finally:
        sock.close()
    values = [json.loads(m.value) for m in read_back(broker.bootstrap_servers, "live", 5)]
    assert values == [{"n": 12345 + i, "ok": True, "s": "x" * i} for i in range(5)]


def test_a_new_topic_is_made_on_first_produce_when_the_broker_makes_them(tmp_path):
    """As a Kafka producer's Metadata request does: with auto.create.topics.enable (trafka's
    default) a produce to an unknown topic creates it with num.partitions partitions."""
    from tests.restproxy.conftest import Proxy
    from trafka.testing import TrafkaBroker

    with TrafkaBroker(data_dir=tmp_path / "data", config={"num.partitions": 3}) as broker:
        proxy = Proxy(broker.rest_proxy_url)
        written = proxy.produce("born", [{"value": {"type": "JSON", "data": i}} for i in range(30)])
        assert {w["error_code"] for w in written} == {200}
        assert proxy.get(f"{proxy.cluster}/topics/born").json()["partitions_count"] == 3
        v2 = proxy.v2_produce("/topics/born-too", "json", {"records": [{"value": 1}]})
        assert v2.status_code == 200 and v2.json()["offsets"][0]["offset"] == 0
        assert [m.value for m in read_back(broker.bootstrap_servers, "born-too", 1)] == [b"1"]
