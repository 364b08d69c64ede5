"""ApiVersions (key 18): which APIs and versions the broker serves."""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, INT64, STRING

REQUEST = Message(
    "ApiVersionsRequest",
    versions="0-4",
    flexible="3+",
    fields=[
        Field("client_software_name", STRING, "3+"),
        Field("client_software_version", STRING, "3+"),
    ],
)

RESPONSE = Message(
    "ApiVersionsResponse",
    versions="0-4",
    flexible="3+",
    fields=[
        Field("error_code", INT16),
        Field(
            "api_keys",
            Array([
                Field("api_key", INT16),
                Field("min_version", INT16),
                Field("max_version", INT16),
            ]),
        ),
        Field("throttle_time_ms", INT32, "1+"),
        Field(
            "supported_features",
            Array([
                Field("name", STRING),
                Field("min_version", INT16),
                Field("max_version", INT16),
            ]),
            "3+",
            tag=0,
            tagged="3+",
        ),
        Field("finalized_features_epoch", INT64, "3+", tag=1, tagged="3+", default=-1),
        Field(
            "finalized_features",
            Array([
                Field("name", STRING),
                Field("max_version_level", INT16),
                Field("min_version_level", INT16),
            ]),
            "3+",
            tag=2,
            tagged="3+",
        ),
    ],
)

API = Api(18, "ApiVersions", REQUEST, RESPONSE, response_header_always_v0=True)
