"""AlterUserScramCredentials (key 51), version 0.

Behavior:
- Upsertions carry the client-side salted password; the broker keeps only salt, stored key,
  server key and iterations (trafka.broker.security.scram), written to the data dir before the
  answer. One result per user, as in Kafka: UNSUPPORTED_SASL_MECHANISM for an unknown mechanism,
  UNACCEPTABLE_CREDENTIAL for an empty name or iterations outside 4096..16384,
  DUPLICATE_RESOURCE when a user's mechanism appears twice, RESOURCE_NOT_FOUND when deleting a
  credential that does not exist. A user with any error has none of its changes applied.
"""

from __future__ import annotations

from collections import Counter

from trafka.broker.requests import routes
from trafka.broker.handlers.describe_acls import NOT_AUTHORIZED
from trafka.broker.security.authorizer import CLUSTER, Op, authorize
from trafka.broker.security.scram import MAX_ITERATIONS, MECHANISMS, MIN_ITERATIONS, ScramCredential
from trafka.wire.errors import ErrorCode


def _check(store, change, deleting: bool, seen: Counter) -> tuple[int, str] | None:
    mechanism = MECHANISMS.get(change.mechanism)
    if not change.name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if mechanism is None:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, f"Unknown SCRAM mechanism {change.mechanism}"
    if seen[(change.name, change.mechanism)] > 1:
        return ErrorCode.DUPLICATE_RESOURCE, f"A user credential cannot be altered twice in the same request: {change.name}"
    if deleting and store.get(change.name, mechanism) is None:
        return ErrorCode.RESOURCE_NOT_FOUND, f"Attempt to delete a user credential that does not exist: {change.name}"
    if not deleting and not MIN_ITERATIONS <= change.iterations <= MAX_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, (f"Iterations {change.iterations} must be between "
                                                   f"{MIN_ITERATIONS} and {MAX_ITERATIONS}")
    if not deleting and not change.salt:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "The salt must not be empty"
    return None


@routes.handles(51, min_version=0, max_version=0)
async def handle(ctx, request):
    if not authorize(ctx, Op.ALTER, CLUSTER):  # every user named gets the error, as in Kafka
        users = dict.fromkeys(c.name for c in [*request.deletions, *request.upsertions])
        return {"throttle_time_ms": 0, "results": [
            {"user_name": name, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "error_message": NOT_AUTHORIZED}
            for name in users]}
    store = ctx.broker.security.scram
    seen = Counter((c.name, c.mechanism) for c in [*request.deletions, *request.upsertions])
    errors: dict[str, tuple[int, str]] = {}
    order: list[str] = []
    for deleting, changes in ((True, request.deletions), (False, request.upsertions)):
        for change in changes:
            order.append(change.name)
            problem = _check(store, change, deleting, seen)
            if problem and change.name not in errors:
                errors[change.name] = problem
    for deleting, changes in ((True, request.deletions), (False, request.upsertions)):
        for change in changes:
            if change.name in errors:
                continue
            mechanism = MECHANISMS[change.mechanism]
            if deleting:
                store.delete(change.name, mechanism)
            else:
                store.upsert(change.name, mechanism, ScramCredential.from_salted_password(
                    mechanism, bytes(change.salt), bytes(change.salted_password), change.iterations))
    if len(errors) < len(set(order)):
        store.save()
    results = [{"user_name": name, "error_code": errors.get(name, (ErrorCode.NONE, None))[0],
                "error_message": errors.get(name, (ErrorCode.NONE, None))[1]} for name in dict.fromkeys(order)]
    return {"throttle_time_ms": 0, "results": results}
