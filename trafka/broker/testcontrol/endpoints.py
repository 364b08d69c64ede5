"""Test control: the broker clock, injected faults and snapshots, as one small request API.

`handle(broker, method, path, body)` is what both doors call: the HTTP control endpoints
(`/api/v1/clock`, `/api/v1/faults`, `/api/v1/snapshot`) and `TrafkaBroker`'s in-process
calls. It runs on the broker's trio thread, between two requests, and returns a JSON-able
answer; bad input raises ValueError (HTTP 400), an unknown path or fault id LookupError (404).

    GET    /api/v1/clock                {"time_ms", "offset_ms"}
    POST   /api/v1/clock/advance        {"ms": N} -> the clock after the move
    GET    /api/v1/faults               [each fault: id, api, what it does, remaining, fired]
    POST   /api/v1/faults               a fault (see trafka.broker.testcontrol.faults) -> its description
    DELETE /api/v1/faults[/<id>]        {"removed": count}
    POST   /api/v1/snapshot             {"path": a directory that does not exist yet}
    GET    /api/v1/brokers              a simulated cluster's brokers: node id, alive, host, port, rack
    POST   /api/v1/brokers/<i>/stop     stop broker i (clean shutdown); /kill skips the clean shutdown
    POST   /api/v1/brokers/<i>/start    start it again
    POST   /api/v1/brokers/<i>/pause-replication, /resume-replication   its fetchers hold (a lagging replica)
    GET    /api/v1/partitions/<topic>/<p>            leader, epoch, replicas, ISR, reassignment
    POST   /api/v1/partitions/<topic>/<p>/leader     {"broker": i}: an in-sync replica leads now
    POST   /api/v1/partitions/<topic>/<p>/reassign   {"replicas": [i, ...]} (null cancels)
    POST   /api/v1/nemesis              {"seed", "duration_s", "faults", "max_down"}: start a nemesis
    GET    /api/v1/nemesis              its state, settings and the faults done so far
    DELETE /api/v1/nemesis              stop it and heal
"""

from __future__ import annotations

PREFIX = "/api/v1/"


def _clock(broker) -> dict:
    return {"time_ms": broker.clock.time_ms(), "offset_ms": getattr(broker.clock, "offset_ms", 0),
            "down_ms": broker.faults.down_remaining_ms()}


def _body(body) -> dict:
    if not isinstance(body, dict):
        raise ValueError("the request body must be a JSON object")
    return body


def handle(broker, method: str, path: str, body=None):
    parts = path.removeprefix(PREFIX).strip("/").split("/")
    route = (method.upper(), parts[0], len(parts))
    if route == ("GET", "clock", 1):
        return _clock(broker)
    if route == ("POST", "clock", 2) and parts[1] == "advance":
        body = _body(body)
        if set(body) != {"ms"}:
            raise ValueError('advance takes {"ms": N}')
        broker.advance_clock(body["ms"])
        return _clock(broker)
    if route == ("GET", "faults", 1):
        return broker.faults.list()
    if route == ("POST", "faults", 1):
        return broker.faults.add(_body(body)).describe()
    if route == ("DELETE", "faults", 1):
        return {"removed": broker.faults.clear()}
    if route == ("DELETE", "faults", 2):
        if not parts[1].isdigit():
            raise ValueError(f"a fault id is a number, got {parts[1]!r}")
        if not broker.faults.remove(int(parts[1])):
            raise LookupError(f"no fault {parts[1]}")
        return {"removed": 1}
    if route == ("POST", "snapshot", 1):
        target = _body(body).get("path")
        if not isinstance(target, str) or not target:
            raise ValueError('snapshot takes {"path": "/a/new/directory"}')
        try:
            return {"path": str(broker.snapshot(target))}
        except FileExistsError as exc:
            raise ValueError(str(exc)) from None
    if parts[0] == "nemesis" and len(parts) == 1:
        return _nemesis(broker, method.upper(), body)
    if parts[0] == "brokers":
        return _brokers(broker, method.upper(), parts[1:])
    if parts[0] == "partitions":
        return _partitions(broker, method.upper(), parts[1:], body)
    raise LookupError(f"no control endpoint {method} {path}")


def _nemesis(broker, method: str, body):
    from trafka.broker.testcontrol.nemesis import runner

    if method == "POST":
        return runner.start(broker, body)
    if method == "GET":
        return runner.report(broker)
    if method == "DELETE":
        return runner.stop(broker)
    raise LookupError(f"no control endpoint {method} /api/v1/nemesis")


def _brokers(broker, method: str, parts: list[str]):
    cluster = broker.cluster
    if method == "GET" and not parts:
        return [cluster.describe_broker(node.node_id) for node in cluster.nodes]
    if method != "POST" or len(parts) != 2 or not parts[0].isdigit():
        raise LookupError(f"no control endpoint {method} /api/v1/brokers/{'/'.join(parts)}")
    node_id, action = int(parts[0]), parts[1]
    if action == "stop":
        return cluster.stop_broker(node_id)
    if action == "kill":
        return cluster.stop_broker(node_id, kill=True)
    if action == "start":
        return cluster.start_broker(node_id)
    if action in ("pause-replication", "resume-replication"):
        cluster.node(node_id)
        (cluster.replication.paused.add if action.startswith("pause") else cluster.replication.paused.discard)(node_id)
        return cluster.describe_broker(node_id)
    raise LookupError(f"no control endpoint POST /api/v1/brokers/{node_id}/{action}")


def _partitions(broker, method: str, parts: list[str], body):
    cluster = broker.cluster
    if len(parts) < 2 or not parts[1].isdigit():
        raise LookupError(f"no control endpoint {method} /api/v1/partitions/{'/'.join(parts)}")
    topic, partition, action = parts[0], int(parts[1]), parts[2] if len(parts) > 2 else None
    if method == "GET" and action is None:
        return cluster.describe_partition(topic, partition)
    if method == "POST" and action == "leader":
        leader = _body(body).get("broker")
        if not isinstance(leader, int):
            raise ValueError('leader takes {"broker": N}')
        return cluster.move_leader(topic, partition, leader)
    if method == "POST" and action == "reassign":
        replicas = _body(body).get("replicas", ...)
        if replicas is not None and (not isinstance(replicas, list) or not all(isinstance(r, int) for r in replicas)):
            raise ValueError('reassign takes {"replicas": [broker ids]} or {"replicas": null} to cancel')
        return cluster.reassign(topic, partition, replicas)
    raise LookupError(f"no control endpoint {method} /api/v1/partitions/{'/'.join(parts)}")
