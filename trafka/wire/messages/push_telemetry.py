"""PushTelemetry (key 72): a client pushes its metrics, OTLP-encoded and maybe compressed
(KIP-714); v0. `terminating` marks the last push before the client closes."""

from trafka.wire.api import Api
from trafka.wire.schema import Field, Message
from trafka.wire.types import BOOL, BYTES, INT8, INT16, INT32, UUID

REQUEST = Message("PushTelemetryRequest", versions="0", flexible="0+", fields=[
    Field("client_instance_id", UUID),
    Field("subscription_id", INT32),
    Field("terminating", BOOL),
    Field("compression_type", INT8),
    Field("metrics", BYTES),
])

RESPONSE = Message("PushTelemetryResponse", versions="0", flexible="0+", fields=[
    Field("throttle_time_ms", INT32),
    Field("error_code", INT16),
])

API = Api(72, "PushTelemetry", REQUEST, RESPONSE)
