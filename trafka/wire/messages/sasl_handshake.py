"""SaslHandshake (key 17): the client names its SASL mechanism; v0-1.

After a v0 handshake the SASL tokens follow as raw size-prefixed frames; after v1 they travel
in SaslAuthenticate requests.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, STRING

REQUEST = Message(
    "SaslHandshakeRequest",
    versions="0-1",
    flexible="none",
    fields=[Field("mechanism", STRING)],
)

RESPONSE = Message(
    "SaslHandshakeResponse",
    versions="0-1",
    flexible="none",
    fields=[
        Field("error_code", INT16),
        Field("mechanisms", Array(STRING)),
    ],
)

API = Api(17, "SaslHandshake", REQUEST, RESPONSE)
