"""CreateAcls (key 30), versions 1-3 (v0 left Kafka in 4.0).

Behavior:
- Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED for every creation otherwise).
- Without an authorizer every creation is answered SECURITY_DISABLED, as Kafka does.
- Each binding is checked alone, with Kafka's INVALID_REQUEST messages (UNKNOWN/ANY values,
  MATCH/ANY pattern types, an empty name, a CLUSTER name other than kafka-cluster, a principal
  without a type); the valid ones are stored (a binding that exists already is no error) and
  written to the metadata log (an AccessControlEntryRecord each) before the answer.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.handlers.describe_acls import NO_AUTHORIZER, NOT_AUTHORIZED
from trafka.broker.security.authorizer import AclBinding, InvalidAcl, Op, CLUSTER, authorize
from trafka.wire.errors import ErrorCode


def _result(error: ErrorCode = ErrorCode.NONE, message: str | None = None) -> dict:
    return {"error_code": error, "error_message": message}


@routes.handles(30, min_version=1, max_version=3)
async def handle(ctx, request):
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return {"throttle_time_ms": 0, "results": [_result(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
                                                   for _ in request.creations]}
    if not authorize(ctx, Op.ALTER, CLUSTER):
        return {"throttle_time_ms": 0, "results": [_result(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, NOT_AUTHORIZED)
                                                   for _ in request.creations]}
    results, valid = [], []
    for creation in request.creations:
        try:
            valid.append(AclBinding.from_wire(creation))
            results.append(_result())
        except InvalidAcl as exc:
            results.append(_result(ErrorCode.INVALID_REQUEST, str(exc)))
    authorizer.create(valid)
    ctx.broker.metadata_cache.answers.clear()  # Metadata answers depend on the ACLs
    return {"throttle_time_ms": 0, "results": results}
