"""IncrementalAlterConfigs (key 44): set, delete, append or subtract single configs; v0-1.

config_operation: 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT.
"""

from trafka.wire.api import Api
from trafka.wire.fields import config_changes, config_resource_result
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT8, INT32, STRING

REQUEST = Message(
    "IncrementalAlterConfigsRequest",
    versions="0-1",
    flexible="1+",
    fields=config_changes([
        Field("name", STRING), Field("config_operation", INT8), Field("value", STRING, nullable="0+"),
    ]),
)

RESPONSE = Message(
    "IncrementalAlterConfigsResponse",
    versions="0-1",
    flexible="1+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "responses",
            Array(config_resource_result()),
        ),
    ],
)

API = Api(44, "IncrementalAlterConfigs", REQUEST, RESPONSE)
