"""DescribeAcls (key 29), versions 1-3 (v0 left Kafka in 4.0).

Behavior:
- Needs DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED otherwise), as in Kafka.
- Without an authorizer (`authorizer.class.name` unset) it answers SECURITY_DISABLED, as Kafka does.
- The filter's UNKNOWN values are INVALID_REQUEST; MATCH finds every pattern that covers the
  name (literal, `*`, prefixes), ANY every pattern type with exactly that name.
- Bindings are grouped by resource pattern, in creation order.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import AclFilter, InvalidAcl, Op, CLUSTER, authorize
from trafka.wire.errors import ErrorCode

NO_AUTHORIZER = "No Authorizer is configured on the broker"
NOT_AUTHORIZED = "Cluster authorization failed."


def _answer(error: ErrorCode, message: str | None = None, resources=()) -> dict:
    return {"throttle_time_ms": 0, "error_code": error, "error_message": message, "resources": list(resources)}


@routes.handles(29, min_version=1, max_version=3)
async def handle(ctx, request):
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return _answer(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    if not authorize(ctx, Op.DESCRIBE, CLUSTER):
        return _answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, NOT_AUTHORIZED)
    try:
        acl_filter = AclFilter.from_wire(request)
    except InvalidAcl as exc:
        return _answer(ErrorCode.INVALID_REQUEST, str(exc))
    resources: dict[tuple, list] = {}
    for acl in authorizer.describe(acl_filter):
        resources.setdefault((acl.resource_type, acl.resource_name, acl.pattern_type), []).append(
            {"principal": acl.principal, "host": acl.host, "operation": acl.operation,
             "permission_type": acl.permission_type})
    return _answer(ErrorCode.NONE, None, (
        {"resource_type": rtype, "resource_name": name, "pattern_type": pattern, "acls": acls}
        for (rtype, name, pattern), acls in resources.items()))
