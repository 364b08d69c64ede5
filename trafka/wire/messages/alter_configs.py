"""AlterConfigs (key 33): replace the whole config of resources; v0-2."""

from trafka.wire.api import Api
from trafka.wire.fields import config_resource_result
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT8, INT32, STRING

REQUEST = Message(
    "AlterConfigsRequest",
    versions="0-2",
    flexible="2+",
    fields=[
        Field(
            "resources",
            Array([
                Field("resource_type", INT8),
                Field("resource_name", STRING),
                Field(
                    "configs",
                    Array([
                        Field("name", STRING),
                        Field("value", STRING, nullable="0+"),
                    ]),
                ),
            ]),
        ),
        Field("validate_only", BOOL),
    ],
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
