"""v2 consumer instances over HTTP, against a real broker: records written by Kafka clients are
read back through instances of one group (each record once, in partition order), offsets
committed over HTTP are the group's (a Kafka client resumes from them and the other way
round), a rebalance between instances loses nothing, idle instances expire on the broker
clock, and every refusal is Confluent's error. What was written is recorded by the test from
the producers' acknowledgements, never read from the broker's internals."""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.request
import uuid

import pytest

from trafka.testing import TrafkaBroker

V2 = "application/vnd.kafka.v2+json"
BINARY = "application/vnd.kafka.binary.v2+json"
JSON_V2 = "application/vnd.kafka.json.v2+json"
RECORDS = 4000
PARTITIONS = 4


def call(base: str, method: str, path: str, body=None, *, accept: str = V2, content_type: str = V2,
         raw: bytes | None = None):
    """(status, parsed body, content type)."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(base.rstrip("/") + path, data=data, method=method,
                                     headers={"Content-Type": content_type, "Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            text = response.read().decode()
            return response.status, json.loads(text) if text else None, response.headers.get("Content-Type")
    except urllib.error.HTTPError as exc:
        text = exc.read().decode()
        return exc.code, json.loads(text) if text else None, exc.headers.get("Content-Type")


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with TrafkaBroker(data_dir=tmp_path_factory.mktemp("restproxy-consumers") / "data",
                      config={"rest.proxy.consumer.instance.timeout.ms": 60_000}) as running:
        assert running.rest_proxy_url, "the broker runs without its REST proxy"
        yield running


def produce(bootstrap: str, topic: str, count: int, partitions: int = PARTITIONS, *,
            create: bool = True) -> dict[tuple[int, int], bytes]:
    """`count` records over `partitions` with kafka-python (the topic made first unless `create`
    is false), in many batches; {(partition, offset): value} as the acknowledgements say."""
    from kafka import KafkaAdminClient, KafkaProducer
    from kafka.admin import NewTopic

    if create:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:
            admin.create_topics([NewTopic(topic, partitions, 1)])
        finally:
            admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=2, batch_size=4096)
    try:
        futures = [(producer.send(topic, key=str(i).encode(), value=f"{topic}-{i}".encode(), partition=i % partitions),
                    f"{topic}-{i}".encode()) for i in range(count)]
        producer.flush(60)
        acked = {}
        for future, value in futures:
            meta = future.get(timeout=60)
            acked[(meta.partition, meta.offset)] = value
        return acked
    finally:
        producer.close()


def create_instance(base: str, group: str, **config) -> str:
    status, body, _ = call(base, "POST", f"/consumers/{group}", {"format": "binary", **config})
    assert status == 200, body
    assert body["base_uri"].endswith(f"/consumers/{group}/instances/{body['instance_id']}")
    return f"/consumers/{group}/instances/{body['instance_id']}"


def read_all(base: str, instances: list[str], expected: int, *, deadline_s: float = 90) -> list[dict]:
    """GET records from each instance in turn until `expected` records came back in all."""
    found: list[dict] = []
    deadline = time.monotonic() + deadline_s
    while len(found) < expected and time.monotonic() < deadline:
        for path in instances:
            status, body, ctype = call(base, "GET", f"{path}/records?timeout=500", accept=BINARY)
            assert status == 200, body
            assert ctype.startswith(BINARY)
            for r in body:
                r["instance"] = path
            found += body
    return found


def check_exactly_once(found: list[dict], acked: dict[tuple[int, int], bytes]) -> None:
    got = {(r["partition"], r["offset"]): base64.b64decode(r["value"]) for r in found}
    assert len(found) == len(got), "a record was read twice"
    missing = sorted(set(acked) - set(got))
    assert not missing, f"{len(missing)} acknowledged records never read, e.g. {missing[:5]}"
    assert got == acked
    for partition in {p for p, _ in acked}:
        offsets = [r["offset"] for r in found if r["partition"] == partition]
        assert offsets == sorted(offsets), f"partition {partition} read out of order"


def test_two_instances_share_a_group_and_read_every_record_once(broker):
    topic = f"v2-{uuid.uuid4().hex[:8]}"
    acked = produce(broker.bootstrap_servers, topic, RECORDS)
    base, group = broker.rest_proxy_url, f"g-{topic}"
    first = create_instance(base, group, **{"auto.offset.reset": "earliest", "auto.commit.enable": "true"})
    second = create_instance(base, group, **{"auto.offset.reset": "earliest", "auto.commit.enable": "true"})
    for path in (first, second):
        assert call(base, "POST", f"{path}/subscription", {"topics": [topic]})[0] == 204
        assert call(base, "GET", f"{path}/subscription")[1] == {"topics": [topic]}
    # The group spreads the partitions over both instances; what is read meanwhile counts too.
    found = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        owned = [call(base, "GET", f"{p}/assignments")[1]["partitions"] for p in (first, second)]
        if all(owned) and sorted(o["partition"] for own in owned for o in own) == list(range(PARTITIONS)):
            break
        found += call(base, "GET", f"{first}/records?timeout=100&max_bytes=2000", accept=BINARY)[1]
        time.sleep(0.2)
    else:
        pytest.fail(f"the partitions were not spread over both instances: {owned}")
    for r in found:
        r["instance"] = first
    found += read_all(base, [first, second], RECORDS - len(found))
    check_exactly_once(found, acked)
    assert {r["instance"] for r in found} == {first, second}
    assert {r["topic"] for r in found} == {topic}
    for path in (first, second):
        assert call(base, "DELETE", path)[0] == 204
        assert call(base, "GET", f"{path}/subscription")[1]["error_code"] == 40403


def test_a_rebalance_between_instances_loses_and_repeats_nothing(broker):
    """Auto-commit on: the first instance reads part, a second joins (the first's revoked
    partitions are committed as they move), then the first is deleted (it commits and leaves):
    the second reads the rest, and every record comes once."""
    topic = f"v2-{uuid.uuid4().hex[:8]}"
    acked = produce(broker.bootstrap_servers, topic, RECORDS)
    base, group = broker.rest_proxy_url, f"g-{topic}"
    config = {"auto.offset.reset": "earliest", "auto.commit.enable": "true"}
    first = create_instance(base, group, **config)
    call(base, "POST", f"{first}/subscription", {"topics": [topic]})
    found = []
    while len(found) < RECORDS // 4:
        status, body, _ = call(base, "GET", f"{first}/records?timeout=1000&max_bytes=20000", accept=BINARY)
        assert status == 200
        found += body
    second = create_instance(base, group, **config)
    call(base, "POST", f"{second}/subscription", {"topics": [topic]})
    for _ in range(10):
        for path in (first, second):
            found += call(base, "GET", f"{path}/records?timeout=200&max_bytes=20000", accept=BINARY)[1]
    assert call(base, "DELETE", first)[0] == 204
    found += read_all(base, [second], RECORDS - len(found))
    check_exactly_once(found, acked)


def test_commits_over_http_are_the_groups_offsets(broker):
    """An instance reads part of a topic and commits the last offsets it read (the +1 is the
    proxy's, as Confluent's); GET offsets answers them; a kafka-python consumer of the group
    starts there and reads the rest, each record once."""
    from kafka import KafkaConsumer

    topic = f"v2-{uuid.uuid4().hex[:8]}"
    acked = produce(broker.bootstrap_servers, topic, 2000, partitions=2)
    base, group = broker.rest_proxy_url, f"g-{topic}"
    path = create_instance(base, group, **{"auto.offset.reset": "earliest", "auto.commit.enable": "false"})
    assert call(base, "POST", f"{path}/assignments", {"partitions": [{"topic": topic, "partition": 0},
                                                                     {"topic": topic, "partition": 1}]})[0] == 204
    assert call(base, "GET", f"{path}/assignments")[1] == {"partitions": [{"topic": topic, "partition": 0},
                                                                          {"topic": topic, "partition": 1}]}
    found = []
    while len(found) < 700:
        found += call(base, "GET", f"{path}/records?timeout=1000&max_bytes=4000", accept=BINARY)[1]
    last = {}
    for r in found:
        last[r["partition"]] = max(last.get(r["partition"], -1), r["offset"])
    status, body, _ = call(base, "POST", f"{path}/offsets",
                           {"offsets": [{"topic": topic, "partition": p, "offset": o} for p, o in last.items()]})
    assert (status, body) == (200, [])
    status, body, _ = call(base, "GET", f"{path}/offsets", {"partitions": [{"topic": topic, "partition": p}
                                                                         for p in sorted(last)]})
    assert status == 200
    assert {(o["partition"], o["offset"]) for o in body["offsets"]} == {(p, o + 1) for p, o in last.items()}
    assert call(base, "DELETE", path)[0] == 204

    consumer = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap_servers, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=10_000)
    try:
        rest = [m for _, m in zip(range(2000 - len(found)), consumer)]
        consumer.commit()
    finally:
        consumer.close()
    both = found + [{"partition": m.partition, "offset": m.offset, "value": base64.b64encode(m.value).decode()}
                    for m in rest]
    check_exactly_once(both, acked)

    # And back: a new instance of the group starts where kafka-python committed (the end).
    again = create_instance(base, group, **{"auto.offset.reset": "earliest"})
    call(base, "POST", f"{again}/subscription", {"topics": [topic]})
    assert call(base, "GET", f"{again}/records?timeout=3000", accept=BINARY)[1] == []
    call(base, "DELETE", again)


def test_seeks_and_json_records(broker):
    topic = f"v2-{uuid.uuid4().hex[:8]}"
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, acks="all")
    for i in range(50):
        producer.send(topic, key=json.dumps({"k": i}).encode(), value=json.dumps({"n": i, "s": "é"}).encode(), partition=0)
    producer.flush(30)
    producer.close()
    base, group = broker.rest_proxy_url, f"g-{topic}"
    path = create_instance(base, group, format="json", **{"auto.offset.reset": "latest"})
    call(base, "POST", f"{path}/assignments", {"partitions": [{"topic": topic, "partition": 0}]})
    # latest: nothing; then to the beginning; then to offset 40; then to the end.
    assert call(base, "GET", f"{path}/records?timeout=300", accept=JSON_V2)[1] == []
    assert call(base, "POST", f"{path}/positions/beginning", {"partitions": [{"topic": topic, "partition": 0}]})[0] == 204
    status, body, ctype = call(base, "GET", f"{path}/records?timeout=2000", accept=JSON_V2)
    assert ctype.startswith(JSON_V2)
    assert body[0] == {"topic": topic, "key": {"k": 0}, "value": {"n": 0, "s": "é"}, "partition": 0, "offset": 0}
    assert call(base, "POST", f"{path}/positions", {"offsets": [{"topic": topic, "partition": 0, "offset": 40}]})[0] == 204
    body = call(base, "GET", f"{path}/records?timeout=2000", accept=JSON_V2)[1]
    assert [r["offset"] for r in body] == list(range(40, 50))
    assert call(base, "POST", f"{path}/positions/end", {"partitions": [{"topic": topic, "partition": 0}]})[0] == 204
    assert call(base, "GET", f"{path}/records?timeout=300", accept=JSON_V2)[1] == []
    # A binary Accept for a json instance: Confluent's 40601.
    status, body, _ = call(base, "GET", f"{path}/records", accept=BINARY)
    assert (status, body["error_code"]) == (406, 40601)
    # A seek on a partition it does not own.
    status, body, _ = call(base, "POST", f"{path}/positions", {"offsets": [{"topic": topic, "partition": 3, "offset": 0}]})
    assert (status, body["error_code"]) == (409, 40903)
    call(base, "DELETE", path)


def test_refusals_are_confluents(broker):
    base, group = broker.rest_proxy_url, f"g-{uuid.uuid4().hex[:8]}"
    assert call(base, "POST", f"/consumers/{group}", {"name": "one"})[0] == 200
    status, body, _ = call(base, "POST", f"/consumers/{group}", {"name": "one"})
    assert (status, body["error_code"]) == (409, 40902)
    status, body, _ = call(base, "POST", f"/consumers/{group}", {"format": "yaml"})
    assert (status, body["error_code"]) == (422, 42204)
    status, body, _ = call(base, "POST", f"/consumers/{group}", {"auto.offset.reset": "sometimes"})
    assert (status, body["error_code"]) == (422, 42204)
    path = f"/consumers/{group}/instances/one"
    status, body, _ = call(base, "POST", f"{path}/subscription", raw=b"{not json")
    assert (status, body["error_code"]) == (400, 400)
    status, body, _ = call(base, "POST", f"{path}/subscription", {"topics": ["a"], "topic_pattern": "a.*"})
    assert (status, body["error_code"]) == (409, 40903)
    assert call(base, "POST", f"{path}/subscription", {"topics": ["a"]})[0] == 204
    status, body, _ = call(base, "POST", f"{path}/assignments", {"partitions": [{"topic": "a", "partition": 0}]})
    assert (status, body["error_code"]) == (409, 40903)
    for method, suffix in (("GET", "/records"), ("GET", "/subscription"), ("DELETE", ""), ("GET", "/assignments")):
        status, body, _ = call(base, method, f"/consumers/{group}/instances/nobody{suffix}")
        assert (status, body["error_code"]) == (404, 40403)
    assert call(base, "DELETE", path)[0] == 204
    assert call(base, "DELETE", path)[1]["error_code"] == 40403


def test_pattern_subscription_finds_new_topics(broker):
    prefix = f"pat{uuid.uuid4().hex[:6]}"
    acked_a = produce(broker.bootstrap_servers, f"{prefix}-a", 300, partitions=1)
    base, group = broker.rest_proxy_url, f"g-{prefix}"
    path = create_instance(base, group, **{"auto.offset.reset": "earliest"})
    assert call(base, "POST", f"{path}/subscription", {"topic_pattern": f"{prefix}-.*"})[0] == 204
    found = read_all(base, [path], 300)
    acked_b = produce(broker.bootstrap_servers, f"{prefix}-b", 300, partitions=1)
    found += read_all(base, [path], 300, deadline_s=60)
    assert {r["topic"] for r in found} == {f"{prefix}-a", f"{prefix}-b"}
    assert len(found) == len(acked_a) + len(acked_b)
    call(base, "DELETE", path)


def test_idle_instances_expire_on_the_broker_clock(tmp_path):
    """An instance nobody uses for rest.proxy.consumer.instance.timeout.ms of broker time is
    deleted and leaves its group (well before its session would end); one used meanwhile
    stays. Watched through a Kafka admin client's view of the group, which does not touch the
    instance, then through the instance's own 40403."""
    with TrafkaBroker(data_dir=tmp_path / "data", config={"rest.proxy.consumer.instance.timeout.ms": 10_000}) as broker:
        base = broker.rest_proxy_url
        produce(broker.bootstrap_servers, "idle-topic", 10, partitions=1)
        path = create_instance(base, "idle", **{"auto.offset.reset": "earliest"})
        call(base, "POST", f"{path}/subscription", {"topics": ["idle-topic"]})
        assert len(read_all(base, [path], 10)) == 10
        kept = create_instance(base, "idle-kept")
        assert members(broker, "idle") == 1
        broker.advance_clock(6_000)
        assert call(base, "GET", f"{kept}/subscription")[0] == 200  # used: its timeout starts again
        broker.advance_clock(6_000)  # 12 s: past the idle one's timeout, not the group session's 45 s
        deadline = time.monotonic() + 10
        while members(broker, "idle") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert members(broker, "idle") == 0
        assert call(base, "GET", f"{path}/subscription")[1]["error_code"] == 40403
        assert call(base, "GET", f"{kept}/subscription")[0] == 200


def members(broker, group: str) -> int:
    """How many members the group has, as confluent-kafka's admin client describes it."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    described = admin.describe_consumer_groups([group])[group].result(timeout=30)
    return len(described.members)


def test_an_instance_reads_on_across_a_stopped_broker_and_moved_leaders(tmp_path):
    """A 3-broker cluster: an instance subscribed to a replicated topic reads part, broker 0
    (leading partition 0, perhaps coordinating the group) stops, leaders move, and the
    instance reads on: every acknowledged record comes back, in order per partition; a record
    read twice (the group may fence the member while its coordinator moves, and it then starts
    again from the committed offsets, as a Kafka consumer does) is the same record."""
    with TrafkaBroker(data_dir=tmp_path / "data", config={"cluster.brokers": 3, "default.replication.factor": 3,
                                                         "min.insync.replicas": 2}) as cluster:
        topic = "moving"
        acked = produce(cluster.bootstrap_servers, topic, 3000, partitions=3)
        base = cluster.rest_proxy_url
        path = create_instance(base, "movers", **{"auto.offset.reset": "earliest", "auto.commit.enable": "true"})
        call(base, "POST", f"{path}/subscription", {"topics": [topic]})
        found = []
        while len(found) < 800:
            status, body, _ = call(base, "GET", f"{path}/records?timeout=1000&max_bytes=20000", accept=BINARY)
            assert status == 200, body
            found += body
        call(base, "POST", f"{path}/offsets")  # commit what was read
        if cluster.partition_state(topic, 0)["leader"] != 0:
            cluster.move_leader(topic, 0, 0)
        cluster.stop_broker(0)  # the leader of partition 0, and the node the proxy was started beside
        for _ in range(5):
            found += call(base, "GET", f"{path}/records?timeout=500&max_bytes=20000", accept=BINARY)[1]
        for partition in (1, 2):
            state = cluster.partition_state(topic, partition)
            target = next(b for b in state["isr"] if b != state["leader"])
            cluster.move_leader(topic, partition, target)
        deadline = time.monotonic() + 90
        while {(r["partition"], r["offset"]) for r in found} < set(acked) and time.monotonic() < deadline:
            found += call(base, "GET", f"{path}/records?timeout=500", accept=BINARY)[1]
        got = {}
        for r in found:
            key, value = (r["partition"], r["offset"]), base64.b64decode(r["value"])
            assert got.setdefault(key, value) == value, f"{key} read as two different records"
        missing = sorted(set(acked) - set(got))
        assert not missing, f"{len(missing)} acknowledged records never read, e.g. {missing[:5]}"
        assert got == acked
        for partition in range(3):
            offsets = [r["offset"] for r in found if r["partition"] == partition]
            firsts = [o for i, o in enumerate(offsets) if i == 0 or o <= offsets[i - 1]]  # where a re-read began
            assert len(firsts) <= 3, f"partition {partition} went back more than a fencing explains: {firsts}"
        call(base, "DELETE", path)


def test_avro_records_written_by_confluent_kafka_come_back_as_json(broker):
    """confluent-kafka's AvroSerializer writes through the built-in registry; an avro instance
    answers each value in Avro's JSON encoding (and a binary Accept is refused)."""
    from confluent_kafka import Producer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    topic = f"avro-{uuid.uuid4().hex[:8]}"
    schema = json.dumps({"type": "record", "name": "Reading", "fields": [
        {"name": "sensor", "type": "string"}, {"name": "value", "type": "double"},
        {"name": "note", "type": ["null", "string"], "default": None}]})
    serializer = AvroSerializer(SchemaRegistryClient({"url": broker.schema_registry_url}), schema)
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 5})
    sent = [{"sensor": f"s{i % 7}", "value": i / 4, "note": None if i % 2 else f"n{i}"} for i in range(500)]
    for reading in sent:
        producer.produce(topic, value=serializer(reading, SerializationContext(topic, MessageField.VALUE)))
    assert producer.flush(30) == 0
    base, group = broker.rest_proxy_url, f"g-{topic}"
    path = create_instance(base, group, format="avro", **{"auto.offset.reset": "earliest"})
    call(base, "POST", f"{path}/assignments", {"partitions": [{"topic": topic, "partition": 0}]})
    assert call(base, "GET", f"{path}/records", accept=BINARY)[1]["error_code"] == 40601
    found = []
    deadline = time.monotonic() + 30
    while len(found) < len(sent) and time.monotonic() < deadline:
        status, body, ctype = call(base, "GET", f"{path}/records?timeout=1000",
                                   accept="application/vnd.kafka.avro.v2+json")
        assert status == 200, body
        assert ctype.startswith("application/vnd.kafka.avro.v2+json")
        found += body
    # Avro's JSON encoding, as Confluent's consumers answer: a union's value under its branch.
    assert [r["value"] for r in found] == [{**r, "note": None if r["note"] is None else {"string": r["note"]}}
                                           for r in sent]
    assert [r["offset"] for r in found] == list(range(len(sent)))
    call(base, "DELETE", path)


def test_read_committed_instances_skip_aborted_and_open_transactions(broker):
    """isolation.level=read_committed (trafka's addition to Confluent's instance settings; the
    Java consumer's name and values): records of aborted transactions never come back, an open
    transaction's only once it commits (the last stable offset holds them); a read_uncommitted
    instance sees every record."""
    from confluent_kafka import Producer

    topic = f"txn-{uuid.uuid4().hex[:8]}"
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": topic})
    producer.init_transactions(30)

    def transaction(tag: str, commit: bool | None) -> list[str]:
        producer.begin_transaction()
        values = [f"{tag}-{i}" for i in range(150)]
        for value in values:
            producer.produce(topic, value=value.encode(), partition=0)
        producer.flush(30)
        if commit is True:
            producer.commit_transaction(30)
        elif commit is False:
            producer.abort_transaction(30)
        return values

    committed = transaction("a", True)
    transaction("b", False)
    committed += transaction("c", True)
    transaction("d", False)
    committed += transaction("e", True)
    pending = transaction("f", None)  # still open

    base, group = broker.rest_proxy_url, f"g-{topic}"

    def read(isolation: str, expected: int) -> list[str]:
        """Everything from the start, by a new instance of a group of its own."""
        path = create_instance(base, f"{group}-{uuid.uuid4().hex[:6]}",
                               **{"auto.offset.reset": "earliest", "isolation.level": isolation})
        call(base, "POST", f"{path}/assignments", {"partitions": [{"topic": topic, "partition": 0}]})
        found = read_all(base, [path], expected, deadline_s=20)
        call(base, "DELETE", path)
        return [base64.b64decode(r["value"]).decode() for r in found]

    assert read("read_committed", len(committed)) == committed
    assert len(read("read_uncommitted", 900)) == 900  # every record, markers left out
    producer.commit_transaction(30)
    assert read("read_committed", len(committed) + len(pending)) == committed + pending
    status, body, _ = call(base, "POST", f"/consumers/{group}", {"isolation.level": "sometimes"})
    assert (status, body["error_code"]) == (422, 42204)


def test_an_instance_and_a_classic_kafka_python_consumer_share_a_group(broker):
    """A REST instance (a KIP-848 member) and kafka-python (the classic protocol) in one group:
    the broker's mixed group spreads the partitions over both, and between them every record
    written once both hold partitions is read, each once."""
    import threading

    from kafka import KafkaAdminClient, KafkaConsumer
    from kafka.admin import NewTopic
    from kafka.errors import CommitFailedError

    topic = f"mixed-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
    admin.close()
    base, group = broker.rest_proxy_url, f"g-{topic}"
    classic: list = []
    owned: list = []
    stop = threading.Event()

    def kafka_python() -> None:
        consumer = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap_servers, group_id=group,
                                 auto_offset_reset="earliest", enable_auto_commit=False)
        try:
            while not stop.is_set():
                for records in consumer.poll(timeout_ms=200).values():
                    classic.extend({"partition": r.partition, "offset": r.offset,
                                    "value": base64.b64encode(r.value).decode()} for r in records)
                try:
                    consumer.commit()
                except CommitFailedError:  # the group rebalanced meanwhile (the instance left): as an app does, go on
                    pass
                owned[:] = [tp.partition for tp in consumer.assignment()]
        finally:
            consumer.close()

    reader = threading.Thread(target=kafka_python)
    reader.start()
    found = []
    try:
        path = create_instance(base, group, **{"auto.offset.reset": "earliest"})
        call(base, "POST", f"{path}/subscription", {"topics": [topic]})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            mine = [p["partition"] for p in call(base, "GET", f"{path}/assignments")[1]["partitions"]]
            if mine and owned and sorted(mine + owned) == list(range(PARTITIONS)):
                break
            found += call(base, "GET", f"{path}/records?timeout=200", accept=BINARY)[1]
        else:
            pytest.fail(f"the group did not spread the partitions: REST {mine}, kafka-python {owned}")
        acked = produce(broker.bootstrap_servers, topic, 2000, create=False)
        deadline = time.monotonic() + 60
        while len(found) + len(classic) < len(acked) and time.monotonic() < deadline:
            found += call(base, "GET", f"{path}/records?timeout=300", accept=BINARY)[1]
        call(base, "DELETE", path)
    finally:
        stop.set()
        reader.join(30)
    assert found and classic, f"both members read: {len(found)} over HTTP, {len(classic)} by kafka-python"
    check_exactly_once(found + classic, acked)
