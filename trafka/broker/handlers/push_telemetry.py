"""PushTelemetry (key 72), version 0 (KIP-714): a client's metrics, kept decoded for the
console and /metrics (trafka/broker/operations/telemetry.py).

Errors, in Kafka's order: INVALID_REQUEST for a zero instance id or a push after the
terminating one, UNKNOWN_SUBSCRIPTION_ID for an instance or subscription id this broker did not
hand out (the client asks again), THROTTLING_QUOTA_EXCEEDED for a push before its interval (a
terminating push is always taken), UNSUPPORTED_COMPRESSION_TYPE, TELEMETRY_TOO_LARGE beyond
telemetry.max.bytes, INVALID_RECORD for bytes that are not OTLP metrics.
"""

from __future__ import annotations

from trafka.broker.requests import routes


@routes.handles(72, min_version=0, max_version=0)
async def handle(ctx, request):
    error = ctx.broker.client_metrics.push(request.client_instance_id, request.subscription_id, request.terminating,
                                           request.compression_type, request.metrics)
    return {"throttle_time_ms": 0, "error_code": error}
