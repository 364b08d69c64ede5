"""GetTelemetrySubscriptions (key 71): a client asks which of its metrics the broker wants and
how often (KIP-714); v0. A zero client instance id asks the broker to assign one."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT8, INT16, INT32, STRING, UUID

REQUEST = Message("GetTelemetrySubscriptionsRequest", versions="0", flexible="0+", fields=[
    Field("client_instance_id", UUID),
])

RESPONSE = Message("GetTelemetrySubscriptionsResponse", versions="0", flexible="0+", fields=[
    Field("throttle_time_ms", INT32),
    Field("error_code", INT16),
    Field("client_instance_id", UUID),
    Field("subscription_id", INT32),
    Field("accepted_compression_types", Array(INT8)),
    Field("push_interval_ms", INT32),
    Field("telemetry_max_bytes", INT32),
    Field("delta_temporality", BOOL),
    Field("requested_metrics", Array(STRING)),
])

API = Api(71, "GetTelemetrySubscriptions", REQUEST, RESPONSE)
