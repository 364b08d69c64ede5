"""The test-control endpoints: /api/v1/clock, /api/v1/faults, /api/v1/snapshot, /api/v1/brokers,
/api/v1/partitions and /api/v1/nemesis.

Each request is handed to `trafka.broker.testcontrol.endpoints.handle`, the same code `TrafkaBroker`'s
in-process calls run, on the broker's trio thread. They answer only when the console listens
on a loopback address or `console.control.enabled=true` is set, so a container publishing its
console cannot be steered by anyone on the network; otherwise 403 saying how to allow them.
"""

from __future__ import annotations

import ipaddress
import json
from urllib.parse import urlsplit

from starlette.responses import JSONResponse
from starlette.routing import Route

from trafka.broker.testcontrol import endpoints
from trafka.console.app import ApiError


def _loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def control_allowed(broker) -> bool:
    host = urlsplit(broker.console_url).hostname if broker.console_url else broker.host
    return broker.config["console.control.enabled"] or _loopback(host)


def routes(broker) -> list:
    async def endpoint(request):
        if not control_allowed(broker):
            raise ApiError(403, "the control endpoints answer only on a loopback console listener; "
                                "set console.control.enabled=true to allow them on this address")
        body = None
        if request.method == "POST":
            raw = await request.body()
            try:
                body = json.loads(raw) if raw.strip() else {}
            except ValueError:
                raise ApiError(400, "the request body must be a JSON object") from None
        answer = endpoints.handle(broker, request.method, request.url.path, body)
        path = request.url.path.rstrip("/")
        status = 200
        if request.method == "POST" and path.endswith("/faults"):
            status = 201
        elif request.method == "POST" and path.endswith("/nemesis"):
            status = 202  # started; GET /api/v1/nemesis follows it
        return JSONResponse(answer, status_code=status)

    return [
        Route("/api/v1/clock", endpoint, methods=["GET"]),
        Route("/api/v1/clock/advance", endpoint, methods=["POST"]),
        Route("/api/v1/faults", endpoint, methods=["GET", "POST", "DELETE"]),
        Route("/api/v1/faults/{fault_id}", endpoint, methods=["DELETE"]),
        Route("/api/v1/snapshot", endpoint, methods=["POST"]),
        Route("/api/v1/brokers", endpoint, methods=["GET"]),
        Route("/api/v1/brokers/{node}/{action}", endpoint, methods=["POST"]),
        Route("/api/v1/partitions/{topic}/{partition}", endpoint, methods=["GET"]),
        Route("/api/v1/partitions/{topic}/{partition}/{action}", endpoint, methods=["POST"]),
        Route("/api/v1/nemesis", endpoint, methods=["GET", "POST", "DELETE"]),
    ]
