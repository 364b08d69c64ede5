"""DescribeDelegationToken (key 41): the delegation tokens of some owners (null: all); v1-3.

v2 is flexible; v3 adds each token's requester.
"""

from trafka.wire.api import Api
from trafka.wire.messages.create_delegation_token import PRINCIPAL
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BYTES, INT16, INT32, INT64, STRING

REQUEST = Message(
    "DescribeDelegationTokenRequest",
    versions="1-3",
    flexible="2+",
    fields=[Field("owners", Array(PRINCIPAL), nullable="0+")],
)

RESPONSE = Message(
    "DescribeDelegationTokenResponse",
    versions="1-3",
    flexible="2+",
    fields=[
        Field("error_code", INT16),
        Field(
            "tokens",
            Array([
                Field("principal_type", STRING),
                Field("principal_name", STRING),
                Field("token_requester_principal_type", STRING, "3+"),
                Field("token_requester_principal_name", STRING, "3+"),
                Field("issue_timestamp", INT64),
                Field("expiry_timestamp", INT64),
                Field("max_timestamp", INT64),
                Field("token_id", STRING),
                Field("hmac", BYTES),
                Field("renewers", Array(PRINCIPAL)),
            ]),
        ),
        Field("throttle_time_ms", INT32),
    ],
)

API = Api(41, "DescribeDelegationToken", REQUEST, RESPONSE)
