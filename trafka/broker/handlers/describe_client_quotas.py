"""DescribeClientQuotas (key 48), versions 0-1.

Behavior:
- The quotas AlterClientQuotas stored (trafka/broker/metadata/quotas.py), filtered as Kafka filters them:
  each component matches an entity type by exact name, the default (null) name, or any name;
  `strict` leaves out entities with types the filter does not name. A bad filter is the whole
  answer's error (INVALID_REQUEST; an unknown entity type UNSUPPORTED_VERSION) with null entries.
- Entities, their types and their values come in the order of Kafka's metadata image, whose
  java.util.HashMaps give it (quotas.py, java_hashmap.py), not sorted.
- Quotas are reported, never enforced: throttle times stay 0 (docs/compatibility.md).
- Needs DESCRIBE_CONFIGS on the cluster (else CLUSTER_AUTHORIZATION_FAILED), as in Kafka.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.metadata.quotas import QuotaError, entity_pairs
from trafka.broker.security.authorizer import CLUSTER, Op, authorize
from trafka.wire.errors import ErrorCode


@routes.handles(48, min_version=0, max_version=1)
async def handle(ctx, request):
    if not authorize(ctx, Op.DESCRIBE_CONFIGS, CLUSTER):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "error_message": None, "entries": None}
    components = [(c.entity_type, c.match_type, c.match) for c in request.components]
    try:
        found = ctx.broker.quotas.describe(components, request.strict)
    except QuotaError as exc:
        return {"throttle_time_ms": 0, "error_code": exc.code, "error_message": str(exc), "entries": None}
    entries = [
        {
            "entity": [{"entity_type": t, "entity_name": n} for t, n in entity_pairs(sorted(entity, key=lambda p: p[0]))],
            "values": [{"key": k, "value": v} for k, v in values.items()],
        }
        for entity, values in found
    ]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "entries": entries}
