"""The nemesis on a running simulated cluster: the same seed does the same faults on fresh
clusters, everything is healed at the end, and the HTTP endpoints answer 202/200 and 400 with
a message on bad input (a real broker process, its console's control endpoints)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from trafka.testing import TrafkaBroker

CLUSTER = {"cluster.brokers": 3, "offsets.topic.num.partitions": 3, "transaction.state.log.num.partitions": 3,
           "share.coordinator.state.topic.num.partitions": 3}


def _topic(bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic("jobs", 4, 3, config={"min.insync.replicas": "2"})]).values():
        future.result(10)


def _run(tmp_path, name: str, seed: int) -> dict:
    with TrafkaBroker(data_dir=tmp_path / name, config=CLUSTER, in_process=True) as cluster:
        _topic(cluster.bootstrap_servers)
        report = cluster.nemesis(seed=seed, duration_s=4, max_down=1)
        assert all(b["alive"] for b in cluster.brokers()), "a broker the nemesis stopped was not started again"
        assert cluster.faults() == []
        return report


def test_the_same_seed_does_the_same_faults_in_the_same_order_and_spacing(tmp_path):
    first, second = _run(tmp_path, "a", 11), _run(tmp_path, "b", 11)
    assert first["state"] == second["state"] == "done"
    assert len(first["events"]) == first["planned"] >= 3

    def sequence(report):
        return [(e["at_ms"], e["broker_at_ms"], e["kind"], e["planned"], e["target"]) for e in report["events"]]
    assert sequence(first) == sequence(second)
    for report in (first, second):  # in broker time, each fault ran where the plan put it
        for event in report["events"]:
            assert abs(event["broker_time_ms"] - report["started_broker_ms"] - event["broker_at_ms"]) < 1500, event


def _call(cluster, method: str, body=None, raw: bytes | None = None) -> tuple[int, dict]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(cluster.console_url.rstrip("/") + "/api/v1/nemesis", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.trafka_config({"offsets.topic.num.partitions": 3})
def test_the_nemesis_endpoints(trafka_cluster):
    cluster = trafka_cluster
    _topic(cluster.bootstrap_servers)
    assert _call(cluster, "GET") == (200, {"state": "none"})
    assert _call(cluster, "DELETE")[0] == 404
    for body, says in [
        (None, "seed must be an integer"), ([1, 2], "JSON object"), ({"seed": 1, "duration_s": 5, "speed": 9}, "unknown nemesis field"),
        ({"seed": "x", "duration_s": 5}, "seed must be an integer"), ({"seed": 1, "duration_s": 0}, "duration_s"),
        ({"seed": 1, "duration_s": 5, "faults": ["meteor"]}, "unknown fault kind"),
        ({"seed": 1, "duration_s": 5, "max_down": "one"}, "max_down"),
    ]:
        status, answer = _call(cluster, "POST", body if body is not None else {})
        assert status == 400 and says in answer["error"], (body, status, answer)
    assert _call(cluster, "POST", raw=b"{not json")[0] == 400
    status, started = _call(cluster, "POST", {"seed": 5, "duration_s": 60, "faults": ["stop", "kill", "pause"], "max_down": 1})
    assert status == 202 and started["state"] == "running" and started["settings"]["seed"] == 5
    status, again = _call(cluster, "POST", {"seed": 6, "duration_s": 5})
    assert status == 400 and "running already" in again["error"]
    # Wait until it has stopped a broker, then stop it: it heals at once.
    import time

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status, state = _call(cluster, "GET")
        if any(e["kind"] in ("stop", "kill") and e["result"] == "done" for e in state["events"]):
            break
        time.sleep(0.2)
    assert any(e["kind"] in ("stop", "kill") for e in state["events"]), state
    status, stopped = _call(cluster, "DELETE")
    assert status == 200 and stopped["state"] == "stopped"
    assert any(h.startswith("started broker") for h in stopped["healed"]), stopped
    assert all(b["alive"] for b in cluster.brokers())
    assert _call(cluster, "GET")[1]["state"] == "stopped"
