"""DescribeUserScramCredentials (key 50), version 0.

Behavior:
- Lists each user's SCRAM mechanisms and iteration counts (never salts or keys). No users (null
  or empty): every user with credentials. A named user without any: RESOURCE_NOT_FOUND; a name
  asked twice: DUPLICATE_RESOURCE, as in Kafka.
"""

from __future__ import annotations

from collections import Counter

from trafka.broker.requests import routes
from trafka.broker.handlers.describe_acls import NOT_AUTHORIZED
from trafka.broker.security.authorizer import CLUSTER, Op, authorize
from trafka.broker.security.scram import MECHANISM_IDS
from trafka.wire.errors import ErrorCode


def _result(user: str, error=ErrorCode.NONE, message=None, infos=()) -> dict:
    return {"user": user, "error_code": error, "error_message": message, "credential_infos": list(infos)}


@routes.handles(50, min_version=0, max_version=0)
async def handle(ctx, request):
    if not authorize(ctx, Op.DESCRIBE, CLUSTER):
        # Named users each get the error, the top level only when all users were asked for:
        # librdkafka 2.16 crashes on a top-level error when it named users (docs/compatibility.md).
        refused = [_result(u.name, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, NOT_AUTHORIZED) for u in request.users or []]
        top = ErrorCode.NONE if refused else ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return {"throttle_time_ms": 0, "error_code": top, "error_message": None if refused else NOT_AUTHORIZED,
                "results": refused}
    store = ctx.broker.security.scram
    names = [u.name for u in request.users or []]
    if not names:
        names = sorted(store.users)
    counts = Counter(names)
    results = []
    for name in dict.fromkeys(names):
        if counts[name] > 1:
            results.append(_result(name, ErrorCode.DUPLICATE_RESOURCE, f"Cannot describe SCRAM credentials for the same user twice in a single request: {name}"))
        elif name not in store.users:
            results.append(_result(name, ErrorCode.RESOURCE_NOT_FOUND, f"Attempt to describe a user credential that does not exist: {name}"))
        else:
            infos = [{"mechanism": MECHANISM_IDS[m], "iterations": c.iterations} for m, c in sorted(store.users[name].items())]
            results.append(_result(name, infos=infos))
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "results": results}
