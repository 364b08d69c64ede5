"""CreateAcls (key 30): add ACLs; v0-3."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT8, INT16, INT32, STRING

REQUEST = Message(
    "CreateAclsRequest",
    versions="0-3",
    flexible="2+",
    fields=[
        Field(
            "creations",
            Array([
                Field("resource_type", INT8),
                Field("resource_name", STRING),
                Field("resource_pattern_type", INT8, "1+", default=3),
                Field("principal", STRING),
                Field("host", STRING),
                Field("operation", INT8),
                Field("permission_type", INT8),
            ]),
        ),
    ],
)

RESPONSE = Message(
    "CreateAclsResponse",
    versions="0-3",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("results", Array([Field("error_code", INT16), Field("error_message", STRING, nullable="0+")])),
    ],
)

API = Api(30, "CreateAcls", REQUEST, RESPONSE)
