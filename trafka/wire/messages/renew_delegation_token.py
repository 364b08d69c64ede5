"""RenewDelegationToken (key 39): extend a delegation token's expiry; v1-2 (v2 flexible).

ExpireDelegationToken (key 40) has the same shape but for the name of its period field, so both
are declared by `token_expiry_messages` here.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Field, Message
from trafka.wire.types import BYTES, INT16, INT32, INT64


def token_expiry_messages(name: str, period_field: str) -> tuple[Message, Message]:
    """The request (token hmac and a period) and response (the new expiry) of `name`, v1-2."""
    request = Message(
        f"{name}Request",
        versions="1-2",
        flexible="2+",
        fields=[Field("hmac", BYTES), Field(period_field, INT64)],
    )
    response = Message(
        f"{name}Response",
        versions="1-2",
        flexible="2+",
        fields=[
            Field("error_code", INT16),
            Field("expiry_timestamp_ms", INT64, default=-1),
            Field("throttle_time_ms", INT32),
        ],
    )
    return request, response


REQUEST, RESPONSE = token_expiry_messages("RenewDelegationToken", "renew_period_ms")

API = Api(39, "RenewDelegationToken", REQUEST, RESPONSE)
