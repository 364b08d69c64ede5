"""ListConfigResources (key 74): the resources that can carry configs; v0-1.

v0 was ListClientMetricsResources and lists client-metrics resources only; v1 (KIP-1142) takes
resource types (empty: every supported type) and tags each resource with its type.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT8, INT16, INT32, STRING

CLIENT_METRICS = 16

REQUEST = Message(
    "ListConfigResourcesRequest",
    versions="0-1",
    flexible="0+",
    fields=[Field("resource_types", Array(INT8), "1+")],
)

RESPONSE = Message(
    "ListConfigResourcesResponse",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field(
            "config_resources",
            Array([
                Field("resource_name", STRING),
                Field("resource_type", INT8, "1+", default=CLIENT_METRICS),
            ]),
        ),
    ],
)

API = Api(74, "ListConfigResources", REQUEST, RESPONSE)
