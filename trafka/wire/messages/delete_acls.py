"""DeleteAcls (key 31): remove the ACLs that match each filter; v0-3."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT8, INT16, INT32, STRING

REQUEST = Message(
    "DeleteAclsRequest",
    versions="0-3",
    flexible="2+",
    fields=[
        Field(
            "filters",
            Array([
                Field("resource_type_filter", INT8),
                Field("resource_name_filter", STRING, nullable="0+"),
                Field("pattern_type_filter", INT8, "1+", default=3),
                Field("principal_filter", STRING, nullable="0+"),
                Field("host_filter", STRING, nullable="0+"),
                Field("operation", INT8),
                Field("permission_type", INT8),
            ]),
        ),
    ],
)

RESPONSE = Message(
    "DeleteAclsResponse",
    versions="0-3",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "filter_results",
            Array([
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+"),
                Field(
                    "matching_acls",
                    Array([
                        Field("error_code", INT16),
                        Field("error_message", STRING, nullable="0+"),
                        Field("resource_type", INT8),
                        Field("resource_name", STRING),
                        Field("pattern_type", INT8, "1+", default=3),
                        Field("principal", STRING),
                        Field("host", STRING),
                        Field("operation", INT8),
                        Field("permission_type", INT8),
                    ]),
                ),
            ]),
        ),
    ],
)

API = Api(31, "DeleteAcls", REQUEST, RESPONSE)
