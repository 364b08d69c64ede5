"""ApiVersions (key 18), versions 0-4.

Behavior:
- The table is built from the handler registry: every API advertises its handler's range.
- A request for a version above 4 is answered with UNSUPPORTED_VERSION and a v0-shaped body
  listing what we serve (the route's answer_too_new: the body cannot be parsed).
- v3+ carry the features (trafka/broker/metadata/features.py): each supported feature's range, the
  finalized levels and their epoch. As in Kafka 4.x, a v3 answer leaves out the supported
  features whose minimum level is 0 (clients before KAFKA-17011 reject such a range); v4 lists
  them all. Finalized features at level 0 are never listed.
"""

from trafka.broker.requests import routes
from trafka.wire.errors import ErrorCode

FIRST_VERSION_WITH_LEVEL_0 = 4


def api_keys_table() -> list[dict]:
    return [
        {"api_key": key, "min_version": route.min_version, "max_version": route.max_version}
        for key, route in sorted(routes.ROUTES.items())
    ]


def unsupported_version_body() -> dict:
    return {"error_code": ErrorCode.UNSUPPORTED_VERSION, "api_keys": api_keys_table()}


def answer_too_new() -> tuple[int, dict]:
    """A client probing with a newer ApiVersions than ours gets a v0 answer listing what we serve."""
    return 0, unsupported_version_body()


def features_fields(features, version: int) -> dict:
    supported = [
        {"name": name, "min_version": lo, "max_version": hi}
        for name, (lo, hi) in sorted(features.supported.items())
        if lo > 0 or version >= FIRST_VERSION_WITH_LEVEL_0
    ]
    finalized = [
        {"name": name, "max_version_level": level, "min_version_level": level}
        for name, level in sorted(features.finalized().items())
    ]
    return {"supported_features": supported, "finalized_features_epoch": features.epoch, "finalized_features": finalized}


@routes.handles(18, min_version=0, max_version=4, answer_too_new=answer_too_new)
async def handle(ctx, request):
    return {
        "error_code": ErrorCode.NONE,
        "api_keys": api_keys_table(),
        "throttle_time_ms": 0,
        **features_fields(ctx.broker.features, ctx.version),
    }
