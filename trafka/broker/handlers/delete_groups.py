"""DeleteGroups (key 42), versions 0-2.

Behavior:
- Only an Empty group can be deleted (NON_EMPTY_GROUP otherwise); an unknown one is
  GROUP_ID_NOT_FOUND. Deletion writes tombstones for the group's metadata and every one of
  its committed offsets, so it stays deleted after a restart.
"""

from __future__ import annotations

from trafka.broker import registry


@registry.handles(42, min_version=0, max_version=2)
async def handle(ctx, request):
    names = list(request.groups_names)
    errors = ctx.broker.group_coordinator.delete_groups(names)
    return {
        "throttle_time_ms": 0,
        "results": [{"group_id": name, "error_code": error} for name, error in zip(names, errors)],
    }
