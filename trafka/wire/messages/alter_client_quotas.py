"""AlterClientQuotas (key 49): set or remove quotas of client entities (KIP-546); v0-1."""

from trafka.wire.api import Api
from trafka.wire.messages.describe_client_quotas import ENTITY
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, FLOAT64, INT16, INT32, STRING

REQUEST = Message(
    "AlterClientQuotasRequest",
    versions="0-1",
    flexible="1+",
    fields=[
        Field(
            "entries",
            Array([
                Field("entity", Array(ENTITY)),
                Field(
                    "ops",
                    Array([Field("key", STRING), Field("value", FLOAT64), Field("remove", BOOL)]),
                ),
            ]),
        ),
        Field("validate_only", BOOL),
    ],
)

RESPONSE = Message(
    "AlterClientQuotasResponse",
    versions="0-1",
    flexible="1+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "entries",
            Array([
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+"),
                Field("entity", Array(ENTITY)),
            ]),
        ),
    ],
)

API = Api(49, "AlterClientQuotas", REQUEST, RESPONSE)
