"""AlterUserScramCredentials (key 51): add or delete users' SCRAM credentials; v0.

The client salts and hashes the password itself; only the salted password travels.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BYTES, INT8, INT16, INT32, STRING

REQUEST = Message(
    "AlterUserScramCredentialsRequest",
    versions="0",
    flexible="0+",
    fields=[
        Field("deletions", Array([Field("name", STRING), Field("mechanism", INT8)])),
        Field(
            "upsertions",
            Array([
                Field("name", STRING),
                Field("mechanism", INT8),
                Field("iterations", INT32),
                Field("salt", BYTES),
                Field("salted_password", BYTES),
            ]),
        ),
    ],
)

RESPONSE = Message(
    "AlterUserScramCredentialsResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array([
                Field("user_name", STRING),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+"),
            ]),
        ),
    ],
)

API = Api(51, "AlterUserScramCredentials", REQUEST, RESPONSE)
