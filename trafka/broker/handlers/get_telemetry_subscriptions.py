"""GetTelemetrySubscriptions (key 71), version 0 (KIP-714): the metrics the client-metrics
subscriptions matching this client ask it to push, and how often (trafka/broker/operations/telemetry.py).

Behavior: a zero client instance id is assigned a new one; no matching subscription gives an
empty metric list (the client then pushes nothing). Accepted compression: zstd, lz4, gzip,
snappy; delta temporality; telemetry.max.bytes. The connection's client id, software name and
version (ApiVersions) and address are what subscriptions match.
"""

from __future__ import annotations

from trafka.broker.requests import routes


@routes.handles(71, min_version=0, max_version=0)
async def handle(ctx, request):
    from trafka.broker.operations.telemetry import ACCEPTED_COMPRESSION

    info = ctx.broker.stats.connections.get(ctx.peer)
    error, client = ctx.broker.client_metrics.get_subscriptions(
        request.client_instance_id, ctx.client_id or "", info.software_name if info else None,
        info.software_version if info else None, ctx.peer)
    if info is not None:
        info.client_instance_id = client.instance_id
    return {
        "throttle_time_ms": 0, "error_code": error, "client_instance_id": client.instance_id,
        "subscription_id": client.subscription_id,
        "accepted_compression_types": [int(c) for c in ACCEPTED_COMPRESSION],
        "push_interval_ms": client.interval_ms,
        "telemetry_max_bytes": ctx.broker.config["telemetry.max.bytes"],
        "delta_temporality": True,
        "requested_metrics": client.metrics,
    }
