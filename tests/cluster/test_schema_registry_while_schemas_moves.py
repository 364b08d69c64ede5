"""The schema registry while the leadership of `_schemas` moves between brokers: a request that
reaches it before the new leader has loaded the registry's state answers 500 with error code
50004 (unknown leader, retriable for Confluent's clients), never 50001 with a traceback in the
log, and every schema it answered with an id keeps that id afterwards."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

pytestmark = pytest.mark.trafka_config({"schema.registry.port": 0})


def post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def avro(n: int) -> str:
    return json.dumps({"type": "record", "name": f"R{n}", "fields": [{"name": "f", "type": "long"}]})


def test_registrations_while_the_schemas_leader_moves(trafka_cluster):
    url = trafka_cluster.schema_registry_url.rstrip("/")
    assert post(f"{url}/subjects/warmup-value/versions", {"schema": avro(1000)})[0] == 200  # makes `_schemas`
    answers: list[tuple[int, int, dict]] = []
    done = threading.Event()

    def register():
        for n in range(300):
            status, body = post(f"{url}/subjects/moving-{n}-value/versions", {"schema": avro(n)})
            answers.append((n, status, body))
        done.set()

    writer = threading.Thread(target=register)
    writer.start()
    moves = 0
    while not done.is_set() and moves < 60:
        state = trafka_cluster.partition_state("_schemas", 0)
        others = [r for r in state["isr"] if r != state["leader"]]
        if others:
            trafka_cluster.move_leader("_schemas", 0, others[moves % len(others)])
            moves += 1
    writer.join(120)
    assert moves >= 5
    wrong = [(n, status, body) for n, status, body in answers
             if status != 200 and not (status == 500 and body.get("error_code") == 50004)]
    assert not wrong, wrong[:5]
    assert "Traceback" not in trafka_cluster.log_text()
    ok = [(n, body["id"]) for n, status, body in answers if status == 200]
    assert len(ok) > 100, f"only {len(ok)} of 300 registered"
    for n, schema_id in ok:  # what was answered stands
        status, body = get(f"{url}/schemas/ids/{schema_id}")
        assert status == 200 and json.loads(body["schema"]) == json.loads(avro(n)), (n, schema_id, body)
