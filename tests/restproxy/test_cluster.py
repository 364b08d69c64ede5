"""The REST proxy of a simulated cluster of three brokers (cluster.brokers=3) while brokers stop
and leaders move: requests keep being answered (the proxy's client finds each partition's new
leader), and every record the proxy acknowledged is there to read afterwards."""

from __future__ import annotations

import base64
import time

import pytest

from tests.restproxy.conftest import Proxy, read_back
from trafka.testing import TrafkaBroker

TOPIC, PARTITIONS = "payments", 6


@pytest.fixture
def cluster(tmp_path):
    with TrafkaBroker(data_dir=tmp_path / "data", config={"cluster.brokers": 3}) as running:
        yield running


def produce_round(proxy: Proxy, round_: int, acknowledged: dict) -> int:
    """150 records over v3 (streamed) and 50 over v2; the acknowledged ones kept by place."""
    records = [{"key": {"type": "STRING", "data": f"k{i % 20}"},
                "value": {"type": "STRING", "data": f"v3-{round_}-{i}"}} for i in range(150)]
    failed = 0
    for r, a in zip(records, proxy.produce(TOPIC, records)):
        if a["error_code"] == 200:
            acknowledged[(a["partition_id"], a["offset"])] = r["value"]["data"].encode()
        else:
            failed += 1
    v2 = [{"value": base64.b64encode(f"v2-{round_}-{i}".encode()).decode()} for i in range(50)]
    answer = proxy.v2_produce(f"/topics/{TOPIC}", "binary", {"records": v2})
    assert answer.status_code == 200, answer.text
    for r, o in zip(v2, answer.json()["offsets"]):
        if o["error_code"] is None:
            acknowledged[(o["partition"], o["offset"])] = base64.b64decode(r["value"])
        else:
            failed += 1
    return failed


def test_produce_across_broker_stops_and_leader_moves(cluster):
    proxy = Proxy(cluster.rest_proxy_url)
    assert proxy.get("/brokers").json() == {"brokers": [0, 1, 2]}
    created = proxy.create_topic(TOPIC, PARTITIONS, replication_factor=3,
                                 configs=[{"name": "min.insync.replicas", "value": "2"}])
    assert created["replication_factor"] == 3
    acknowledged: dict = {}
    failed = produce_round(proxy, 0, acknowledged)

    cluster.stop_broker(1)
    failed += produce_round(proxy, 1, acknowledged)
    leaders = {p["partition_id"]: p["leader"]["related"].rsplit("/", 1)[1]
               for p in proxy.get(f"{proxy.cluster}/topics/{TOPIC}/partitions").json()["data"]}
    assert "1" not in leaders.values()

    for p in range(PARTITIONS):
        cluster.move_leader(TOPIC, p, 2 if leaders[p] == "0" else 0)
        failed += produce_round(proxy, 10 + p, acknowledged)

    cluster.start_broker(1)
    cluster.stop_broker(0)  # the broker the proxy's service started beside
    for round_ in range(20, 25):
        failed += produce_round(proxy, round_, acknowledged)
    assert proxy.get("/brokers").json() == {"brokers": [1, 2]}
    cluster.start_broker(0)
    failed += produce_round(proxy, 30, acknowledged)

    assert failed == 0
    assert len(acknowledged) == 200 * 14
    read = {(m.partition, m.offset): m.value for m in read_back(cluster.bootstrap_servers, TOPIC, len(acknowledged))}
    assert read == acknowledged


def test_reassignments_in_progress(cluster):
    proxy = Proxy(cluster.rest_proxy_url)
    created = proxy.post(f"{proxy.cluster}/topics", json={
        "topic_name": "moving", "replicas_assignments": [{"partition_id": 0, "broker_ids": [0]},
                                                         {"partition_id": 1, "broker_ids": [1]}]})
    assert created.status_code == 201, created.text
    assert created.json()["partitions_count"] == 2 and created.json()["replication_factor"] == 1
    producer_records = [{"partition_id": 0, "value": {"type": "STRING", "data": f"r{i}"}} for i in range(200)]
    assert {a["error_code"] for a in proxy.produce("moving", producer_records)} == {200}
    base = f"{proxy.cluster}/topics/moving/partitions"
    assert proxy.get(f"{base}/-/reassignment").json()["data"] == []
    assert proxy.get(f"{base}/0/reassignment").status_code == 404

    cluster.pause_replication(2)
    cluster.reassign_partition("moving", 0, [2])
    moving = proxy.get(f"{base}/0/reassignment").json()
    cid = proxy.cluster.rsplit("/", 1)[1]
    assert moving["kind"] == "KafkaReassignment"
    assert moving["metadata"]["resource_name"] == f"crn:///kafka={cid}/topic=moving/partition=0/reassignment"
    assert (moving["adding_replicas"], moving["removing_replicas"]) == ([2], [0])
    assert moving["replicas"]["related"].endswith("/topics/moving/partitions/0/replicas")
    assert proxy.get(f"{base}/-/reassignment").json()["data"] == [moving]
    everything = proxy.get(f"{proxy.cluster}/topics/-/partitions/-/reassignment").json()
    assert everything["kind"] == "KafkaReassignmentList" and everything["data"] == [moving]

    cluster.resume_replication(2)
    deadline = time.monotonic() + 20
    while proxy.get(f"{base}/0/reassignment").status_code != 404:
        assert time.monotonic() < deadline, "the move never finished"
        time.sleep(0.1)
    replicas = proxy.get(f"{base}/0/replicas").json()["data"]
    assert [(r["broker_id"], r["is_leader"]) for r in replicas] == [(2, True)]
    read = read_back(cluster.bootstrap_servers, "moving", len(producer_records))
    assert sorted(m.value for m in read if m.partition == 0) == sorted(r["value"]["data"].encode() for r in producer_records)
