"""CreateDelegationToken (key 38): a delegation token for the caller or an owner; v1-3.

v2 is flexible; v3 names the owner in the request and the requester in the response. (Kafka
4.0 removed v0.)
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BYTES, INT16, INT32, INT64, STRING

PRINCIPAL = [Field("principal_type", STRING), Field("principal_name", STRING)]

REQUEST = Message(
    "CreateDelegationTokenRequest",
    versions="1-3",
    flexible="2+",
    fields=[
        Field("owner_principal_type", STRING, "3+", nullable="3+"),
        Field("owner_principal_name", STRING, "3+", nullable="3+"),
        Field("renewers", Array(PRINCIPAL)),
        Field("max_lifetime_ms", INT64),
    ],
)

RESPONSE = Message(
    "CreateDelegationTokenResponse",
    versions="1-3",
    flexible="2+",
    fields=[
        Field("error_code", INT16),
        Field("principal_type", STRING),
        Field("principal_name", STRING),
        Field("token_requester_principal_type", STRING, "3+"),
        Field("token_requester_principal_name", STRING, "3+"),
        Field("issue_timestamp_ms", INT64, default=-1),
        Field("expiry_timestamp_ms", INT64, default=-1),
        Field("max_timestamp_ms", INT64, default=-1),
        Field("token_id", STRING),
        Field("hmac", BYTES),
        Field("throttle_time_ms", INT32),
    ],
)

API = Api(38, "CreateDelegationToken", REQUEST, RESPONSE)
