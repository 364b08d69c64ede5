"""DeleteAcls (key 31), versions 1-3 (v0 left Kafka in 4.0).

Behavior:
- Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED for every filter otherwise).
- Without an authorizer every filter is answered SECURITY_DISABLED, as Kafka does.
- Each filter removes every binding it matches (filter rules as DescribeAcls) and lists them; a
  filter with UNKNOWN values is INVALID_REQUEST. The change is written to the metadata log
  (a RemoveAccessControlEntryRecord each, one batch) before the answer.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.handlers.describe_acls import NO_AUTHORIZER, NOT_AUTHORIZED
from trafka.broker.security.authorizer import AclFilter, InvalidAcl, Op, CLUSTER, authorize
from trafka.wire.errors import ErrorCode


def _filter_result(error: ErrorCode = ErrorCode.NONE, message: str | None = None, matching=()) -> dict:
    return {"error_code": error, "error_message": message, "matching_acls": list(matching)}


def _matching(acl) -> dict:
    return {"error_code": ErrorCode.NONE, "error_message": None, "resource_type": acl.resource_type,
            "resource_name": acl.resource_name, "pattern_type": acl.pattern_type, "principal": acl.principal,
            "host": acl.host, "operation": acl.operation, "permission_type": acl.permission_type}


@routes.handles(31, min_version=1, max_version=3)
async def handle(ctx, request):
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return {"throttle_time_ms": 0, "filter_results": [_filter_result(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
                                                          for _ in request.filters]}
    if not authorize(ctx, Op.ALTER, CLUSTER):
        return {"throttle_time_ms": 0, "filter_results": [_filter_result(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, NOT_AUTHORIZED)
                                                          for _ in request.filters]}
    parsed: list[AclFilter | InvalidAcl] = []
    for wire_filter in request.filters:
        try:
            parsed.append(AclFilter.from_wire(wire_filter))
        except InvalidAcl as exc:
            parsed.append(exc)
    valid = [f for f in parsed if isinstance(f, AclFilter)]
    removed = iter(authorizer.delete(valid))
    ctx.broker.metadata_cache.answers.clear()  # Metadata answers depend on the ACLs
    results = [_filter_result(ErrorCode.INVALID_REQUEST, str(f)) if isinstance(f, InvalidAcl)
               else _filter_result(matching=map(_matching, next(removed))) for f in parsed]
    return {"throttle_time_ms": 0, "filter_results": results}
