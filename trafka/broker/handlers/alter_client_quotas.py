"""AlterClientQuotas (key 49), versions 0-1.

Behavior:
- Sets or removes quota values per entity (trafka/broker/metadata/quotas.py) with Kafka's controller
  checks: entity types user and client-id (alone or together) or ip (alone, an address), their
  keys (producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate;
  connection_creation_rate for ip), values above 0 and whole numbers for the integral keys;
  each failing entry gets INVALID_REQUEST and its message, the others are applied together and
  written to the data dir before the answer. validate_only checks without applying.
- The entries are answered once per entity in the order of Kafka's results map (a
  java.util.HashMap by entity, java_hashmap.py), not in the request's order.
- Unlike Kafka, an ip entity must be an address (Kafka also resolves host names).
- Quotas are stored, never enforced (docs/compatibility.md).
- Needs ALTER_CONFIGS on the cluster (else CLUSTER_AUTHORIZATION_FAILED for every entry), as in Kafka.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import CLUSTER, Op, authorize
from trafka.wire.errors import ErrorCode


@routes.handles(49, min_version=0, max_version=1)
async def handle(ctx, request):
    entries = [
        ([(e.entity_type, e.entity_name) for e in entry.entity], [(op.key, None if op.remove else op.value) for op in entry.ops])
        for entry in request.entries
    ]
    if authorize(ctx, Op.ALTER_CONFIGS, CLUSTER):
        results = ctx.broker.quotas.alter(entries, request.validate_only)
    else:
        results = [(pairs, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None) for pairs, _ in entries]
    return {
        "throttle_time_ms": 0,
        "entries": [
            {"error_code": error, "error_message": message, "entity": [{"entity_type": t, "entity_name": n} for t, n in pairs]}
            for pairs, error, message in results
        ],
    }
