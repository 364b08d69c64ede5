"""DescribeClientQuotas (key 48): the quotas set for client entities (KIP-546); v0-1.

A filter is a list of components (entity type plus exact name, default, or any name) and a
strict flag; v1 is flexible.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, FLOAT64, INT8, INT16, INT32, STRING

ENTITY = [Field("entity_type", STRING), Field("entity_name", STRING, nullable="0+")]

REQUEST = Message(
    "DescribeClientQuotasRequest",
    versions="0-1",
    flexible="1+",
    fields=[
        Field(
            "components",
            Array([
                Field("entity_type", STRING),
                Field("match_type", INT8),
                Field("match", STRING, nullable="0+"),
            ]),
        ),
        Field("strict", BOOL),
    ],
)

RESPONSE = Message(
    "DescribeClientQuotasResponse",
    versions="0-1",
    flexible="1+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field(
            "entries",
            Array([
                Field("entity", Array(ENTITY)),
                Field("values", Array([Field("key", STRING), Field("value", FLOAT64)])),
            ]),
            nullable="0+",
        ),
    ],
)

API = Api(48, "DescribeClientQuotas", REQUEST, RESPONSE)
