"""SaslAuthenticate (key 36): one SASL token each way; v0-2."""

from trafka.wire.api import Api
from trafka.wire.schema import Field, Message
from trafka.wire.types import BYTES, INT16, INT64, STRING

REQUEST = Message(
    "SaslAuthenticateRequest",
    versions="0-2",
    flexible="2+",
    fields=[Field("auth_bytes", BYTES)],
)

RESPONSE = Message(
    "SaslAuthenticateResponse",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("auth_bytes", BYTES),
        Field("session_lifetime_ms", INT64, "1+"),
    ],
)

API = Api(36, "SaslAuthenticate", REQUEST, RESPONSE)
