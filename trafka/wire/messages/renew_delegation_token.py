"""RenewDelegationToken (key 39): extend a delegation token's expiry; v1-2 (v2 flexible)."""

from trafka.wire.api import Api
from trafka.wire.schema import Field, Message
from trafka.wire.types import BYTES, INT16, INT32, INT64

REQUEST = Message(
    "RenewDelegationTokenRequest",
    versions="1-2",
    flexible="2+",
    fields=[Field("hmac", BYTES), Field("renew_period_ms", INT64)],
)

RESPONSE = Message(
    "RenewDelegationTokenResponse",
    versions="1-2",
    flexible="2+",
    fields=[
        Field("error_code", INT16),
        Field("expiry_timestamp_ms", INT64, default=-1),
        Field("throttle_time_ms", INT32),
    ],
)

API = Api(39, "RenewDelegationToken", REQUEST, RESPONSE)
