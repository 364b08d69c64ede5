"""ApiVersions (key 18), versions 0-3.

Behavior:
- The table is built from the handler registry: every API advertises its handler's range.
- A request for a version above 3 is answered with UNSUPPORTED_VERSION and a v0-shaped body
  listing what we serve (the route's answer_too_new: the body cannot be parsed).
- No features are advertised (no KRaft feature levels on a single dev broker).
"""

from trafka.broker import registry
from trafka.wire.errors import ErrorCode


def api_keys_table() -> list[dict]:
    return [
        {"api_key": key, "min_version": route.min_version, "max_version": route.max_version}
        for key, route in sorted(registry.ROUTES.items())
    ]


def unsupported_version_body() -> dict:
    return {"error_code": ErrorCode.UNSUPPORTED_VERSION, "api_keys": api_keys_table()}


def answer_too_new() -> tuple[int, dict]:
    """A client probing with a newer ApiVersions than ours gets a v0 answer listing what we serve."""
    return 0, unsupported_version_body()


@registry.handles(18, min_version=0, max_version=3, answer_too_new=answer_too_new)
async def handle(ctx, request):
    return {"error_code": ErrorCode.NONE, "api_keys": api_keys_table(), "throttle_time_ms": 0}
