"""The console's ASGI app.

Routes come from the modules named in `ROUTE_MODULES`: each has `routes(broker) -> list` of
Starlette routes (Route, Mount, ...). To add endpoints (the control endpoints /api/v1/clock,
/api/v1/faults, ...), write a module with such a `routes` function and add its name to
`ROUTE_MODULES`; nothing else changes. JSON endpoints answer errors with
`{"error": message}` and a 4xx status, never a traceback: raise `ApiError(status, message)`
(or ValueError -> 400, LookupError -> 404) from a route and the app turns it into that answer.
"""

from __future__ import annotations

import importlib
import logging

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse

from trafka.console.actions import ActionFailed

log = logging.getLogger("trafka.console")

# Each module's `routes(broker)` contributes routes, in this order (first match wins).
ROUTE_MODULES: list[str] = [
    "trafka.console.health",
    "trafka.console.control",
    "trafka.console.api",
    "trafka.console.metrics",
    "trafka.console.pages",
]


class ApiError(Exception):
    """A client error with its HTTP status and a message for the client."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or "application/json" in request.headers.get("accept", "")


def _answer(request: Request, status: int, message: str):
    if _wants_json(request):
        return JSONResponse({"error": message}, status_code=status)
    return PlainTextResponse(f"{status}: {message}\n", status_code=status)


async def _api_error(request: Request, exc: ApiError):
    return _answer(request, exc.status, exc.message)


async def _action_failed(request: Request, exc):
    return _answer(request, 409, str(exc))


async def _value_error(request: Request, exc: ValueError):
    return _answer(request, 400, str(exc) or "bad request")


async def _lookup_error(request: Request, exc: LookupError):
    message = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
    return _answer(request, 404, message or "not found")


async def _http_error(request: Request, exc: HTTPException):
    return _answer(request, exc.status_code, exc.detail or "error")


async def _internal_error(request: Request, exc: Exception):
    log.exception("console: %s %s failed", request.method, request.url.path)
    return _answer(request, 500, "internal error (see the broker log)")


def build_app(broker) -> Starlette:
    routes: list = []
    for name in ROUTE_MODULES:
        routes.extend(importlib.import_module(name).routes(broker))
    app = Starlette(
        routes=routes,
        exception_handlers={
            ApiError: _api_error,
            ActionFailed: _action_failed,
            ValueError: _value_error,
            LookupError: _lookup_error,
            HTTPException: _http_error,
            Exception: _internal_error,
        },
    )
    app.state.broker = broker
    return app
