"""ExpireDelegationToken (key 40): expire a delegation token (now or later); v1-2 (v2 flexible)."""

from trafka.wire.api import Api
from trafka.wire.schema import Field, Message
from trafka.wire.types import BYTES, INT16, INT32, INT64

REQUEST = Message(
    "ExpireDelegationTokenRequest",
    versions="1-2",
    flexible="2+",
    fields=[Field("hmac", BYTES), Field("expiry_time_period_ms", INT64)],
)

RESPONSE = Message(
    "ExpireDelegationTokenResponse",
    versions="1-2",
    flexible="2+",
    fields=[
        Field("error_code", INT16),
        Field("expiry_timestamp_ms", INT64, default=-1),
        Field("throttle_time_ms", INT32),
    ],
)

API = Api(40, "ExpireDelegationToken", REQUEST, RESPONSE)
