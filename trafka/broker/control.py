"""Test control: the broker clock, injected faults and snapshots, as one small request API.

`handle(broker, method, path, body)` is what both doors call: the HTTP control endpoints
(`/api/v1/clock`, `/api/v1/faults`, `/api/v1/snapshot`) and `TrafkaBroker`'s in-process
calls. It runs on the broker's trio thread, between two requests, and returns a JSON-able
answer; bad input raises ValueError (HTTP 400), an unknown path or fault id LookupError (404).

    GET    /api/v1/clock                {"time_ms", "offset_ms"}
    POST   /api/v1/clock/advance        {"ms": N} -> the clock after the move
    GET    /api/v1/faults               [each fault: id, api, what it does, remaining, fired]
    POST   /api/v1/faults               a fault (see trafka.broker.faults) -> its description
    DELETE /api/v1/faults[/<id>]        {"removed": count}
    POST   /api/v1/snapshot             {"path": a directory that does not exist yet}
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
    raise LookupError(f"no control endpoint {method} {path}")
