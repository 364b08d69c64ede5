"""AlterConfigs (key 33): replace the whole config of resources; v0-2."""

from trafka.wire.api import Api
from trafka.wire.fields import config_changes, config_resource_result
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT32, STRING

REQUEST = Message(
    "AlterConfigsRequest",
    versions="0-2",
    flexible="2+",
    fields=config_changes([Field("name", STRING), Field("value", STRING, nullable="0+")]),
)

RESPONSE = Message(
    "AlterConfigsResponse",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "responses",
            Array(config_resource_result()),
        ),
    ],
)

API = Api(33, "AlterConfigs", REQUEST, RESPONSE)
