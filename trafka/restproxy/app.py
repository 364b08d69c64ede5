"""The REST proxy's Starlette app: v3 (`/v3/...`), v2 (`/topics`, `/brokers`, and the
consumer instances' `/consumers/...`), behind one guard that does what Confluent's REST
Proxy does around every endpoint:

- authentication (`rest.proxy.auth=basic`: HTTP Basic credentials of a SASL user of the
  broker, checked as the schema registry checks them), the caller's principal in
  `request.state.principal` ("User:<name>", or "User:ANONYMOUS") for every Kafka request;
- errors: a `RestError` becomes its JSON body and status; anything else is logged once and
  answered 500 without a traceback;
- content negotiation: v2's 406 when the Accept header asks for nothing v2 can give, v3's
  415 for a body declared as anything but JSON.
"""

from __future__ import annotations

import json
import logging

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response

from trafka.restproxy import errors, v2, v3, v3_groups, v3_produce
from trafka.restproxy.answers import V2, V3
from trafka.restproxy.client import ANONYMOUS, Unavailable

log = logging.getLogger("trafka.restproxy")

# What a v2 answer may be served as (Confluent's Versions: its own types, then JSON in general).
V2_ACCEPTED = ("application/vnd.kafka.v2+json", "application/vnd.kafka+json", "application/json",
               "application/*", "*/*")


def build_app(broker, consumers) -> Starlette:
    routes = [*v3.routes(), *v3_groups.routes(), *v3_produce.routes(), *v2.routes(), *consumers.routes()]
    app = Starlette(routes=routes, middleware=[Middleware(Guard, broker=broker)],
                    exception_handlers={404: _not_found, 405: _not_allowed})
    app.state.broker = broker
    app.state.consumers = consumers
    return app


def is_v2(path: str) -> bool:
    return not path.startswith("/v3")


def error_response(path: str, error: errors.RestError) -> Response:
    return Response(json.dumps(error.body()), status_code=error.status, media_type=V2 if is_v2(path) else V3)


async def _not_found(request: Request, exc) -> Response:
    return error_response(request.url.path, errors.RestError(404, 404, "HTTP 404 Not Found"))


async def _not_allowed(request: Request, exc) -> Response:
    return error_response(request.url.path, errors.RestError(405, 405, "HTTP 405 Method Not Allowed"))


# What a v3 answer may be served as: JSON (Confluent's v3 resources produce application/json only).
V3_ACCEPTED = ("application/json", "application/*", "*/*")


def acceptable_v3(accept: str) -> bool:
    """Whether an Accept header admits a v3 answer (no header: anything goes)."""
    return _accepts(accept, lambda media: media in V3_ACCEPTED)


def acceptable_v2(accept: str) -> bool:
    """Whether an Accept header admits a v2 answer (no header: anything goes); an embedded
    format's own type is admitted here (records), the endpoint checks which."""
    return _accepts(accept, lambda media: media in V2_ACCEPTED
                    or (media.startswith("application/vnd.kafka.") and media.endswith(".v2+json")))


def _accepts(accept: str, admitted) -> bool:
    """Whether some media type of an Accept header with a quality above 0 is `admitted`."""
    if not accept.strip():
        return True
    for item in accept.split(","):
        media, *params = [part.strip() for part in item.split(";")]
        quality = next((p[2:] for p in params if p.lower().startswith("q=")), "1")
        try:
            wanted = float(quality) > 0
        except ValueError:
            wanted = False
        if wanted and admitted(media.lower()):
            return True
    return False


def readable_v3(request: Request) -> bool:
    """v3 bodies are JSON: a body of another declared type is refused (415), as Confluent's."""
    declared = request.headers.get("content-type")
    if request.method not in ("POST", "PUT", "PATCH") or declared is None:
        return True
    return declared.split(";")[0].strip().lower() in ("application/json", "application/*+json")


class Guard:
    """ASGI middleware around every route: authenticate, negotiate, answer errors."""

    def __init__(self, app, broker):
        self.app = app
        self.broker = broker

    def principal(self, authorization: str) -> str | None:
        """The caller's principal; None when rest.proxy.auth=basic and the credentials fail."""
        if self.broker.config["rest.proxy.auth"] != "basic":
            return ANONYMOUS
        user = self.broker.security.basic_user(self.broker.listeners, authorization)
        return None if user is None else f"User:{user}"

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope)
        path = request.url.path
        principal = self.principal(request.headers.get("authorization", ""))
        if principal is None:
            log.info("REST proxy: %s %s refused: no valid Basic credentials", request.method, path)
            response = error_response(path, errors.RestError(401, 401, "Unauthorized"))
            response.headers["WWW-Authenticate"] = 'Basic realm="trafka REST proxy"'
            return await response(scope, receive, send)
        if is_v2(path) and not acceptable_v2(request.headers.get("accept", "")):
            return await error_response(path, errors.RestError(406, 406, "HTTP 406 Not Acceptable"))(scope, receive, send)
        if not is_v2(path) and not acceptable_v3(request.headers.get("accept", "")):
            return await error_response(path, errors.RestError(406, 406, "HTTP 406 Not Acceptable"))(scope, receive, send)
        if not is_v2(path) and not readable_v3(request):
            return await error_response(path, errors.RestError(415, 415, "HTTP 415 Unsupported Media Type"))(scope, receive, send)
        scope.setdefault("state", {})["principal"] = principal
        started = False

        async def watched_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watched_send)
        except errors.RestError as exc:
            if started:
                raise
            await error_response(path, exc)(scope, receive, send)
        except Unavailable as exc:
            if started:
                raise
            await error_response(path, errors.unavailable(str(exc)))(scope, receive, send)
        except Exception:  # noqa: BLE001 - one failed request, logged once; never a traceback to the client
            log.exception("REST proxy: %s %s failed", request.method, path)
            if not started:
                error = errors.RestError(500, 500, "Internal Server Error; see the broker log")
                await error_response(path, error)(scope, receive, send)
