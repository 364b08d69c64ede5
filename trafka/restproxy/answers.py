"""What every endpoint shares: JSON answers in v2's and v3's media types, request bodies read
with a size limit, the caller's Kafka client, and v3's resource shapes (`kind`, `metadata`
with `self` and `resource_name`, `related` links), as Confluent's REST Proxy writes them."""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import Response

from trafka.restproxy import errors
from trafka.restproxy.client import KafkaClient

V2 = "application/vnd.kafka.v2+json"
V3 = "application/json"
MAX_BODY = 64 * 1024 * 1024  # a request body past this is refused (413) before it is parsed


def v2(body, status: int = 200) -> Response:
    return Response(json.dumps(body), status_code=status, media_type=V2)


def v3(body, status: int = 200) -> Response:
    return Response(json.dumps(body), status_code=status, media_type=V3)


def no_content() -> Response:
    return Response(status_code=204)


def client(request: Request) -> KafkaClient:
    """The Kafka client acting for this request's caller (its principal, set by the app)."""
    return KafkaClient(request.app.state.broker, request.state.principal)


async def raw_body(request: Request) -> bytes:
    """The request body, refused with 413 once it grows past MAX_BODY."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY:
        raise errors.RestError(413, 413, f"Request body larger than {MAX_BODY} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise errors.RestError(413, 413, f"Request body larger than {MAX_BODY} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json(raw: bytes | str):
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"Unexpected JSON: {exc}") from None


async def json_object(request: Request, *, required: bool = True) -> dict:
    """The body as one JSON object (400 when it is not JSON, 422 when not an object)."""
    raw = await raw_body(request)
    if not raw.strip():
        if required:
            raise errors.bad_request("Request body is empty")
        return {}
    body = parse_json(raw)
    if not isinstance(body, dict):
        raise errors.unprocessable("Request body must be a JSON object")
    return body


# --- v3 shapes -------------------------------------------------------------------------------

def base_url(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def related(url: str) -> dict:
    return {"related": url}


def resource(kind: str, url: str, crn: str, **fields) -> dict:
    return {"kind": kind, "metadata": {"self": url, "resource_name": crn}, **fields}


def collection(kind: str, url: str, data: list) -> dict:
    return {"kind": kind, "metadata": {"self": url, "next": None}, "data": data}


def integer(value, what: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise errors.bad_request(f"{what} must be an integer") from None


def created() -> Response:
    return Response(status_code=201)
