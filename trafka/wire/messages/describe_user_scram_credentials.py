"""DescribeUserScramCredentials (key 50): which SCRAM mechanisms each user has; v0."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT8, INT16, INT32, STRING

REQUEST = Message(
    "DescribeUserScramCredentialsRequest",
    versions="0",
    flexible="0+",
    fields=[Field("users", Array([Field("name", STRING)]), nullable="0+")],
)

RESPONSE = Message(
    "DescribeUserScramCredentialsResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field(
            "results",
            Array([
                Field("user", STRING),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+"),
                Field("credential_infos", Array([Field("mechanism", INT8), Field("iterations", INT32)])),
            ]),
        ),
    ],
)

API = Api(50, "DescribeUserScramCredentials", REQUEST, RESPONSE)
