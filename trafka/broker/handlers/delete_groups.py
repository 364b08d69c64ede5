"""DeleteGroups (key 42), versions 0-2.

Behavior:
- Only an Empty group can be deleted (NON_EMPTY_GROUP otherwise); an unknown one is
  GROUP_ID_NOT_FOUND. Deletion writes tombstones for the group's metadata and every one of
  its committed offsets, so it stays deleted after a restart.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import GROUP, Op, authorize
from trafka.wire.errors import ErrorCode


@routes.handles(42, min_version=0, max_version=2)
async def handle(ctx, request):
    names = list(request.groups_names)
    allowed = [name for name in names if authorize(ctx, Op.DELETE, GROUP, name)]
    deleted = dict(zip(allowed, ctx.broker.group_coordinator.delete_groups(allowed)))
    errors = [deleted.get(name, ErrorCode.GROUP_AUTHORIZATION_FAILED) for name in names]
    return {
        "throttle_time_ms": 0,
        "results": [{"group_id": name, "error_code": error} for name, error in zip(names, errors)],
    }
