"""DescribeConfigs (key 32): configs of topics and brokers; v1-4.

A null or empty key list asks for every config of the resource. v3 adds config types and docs.
"""

from trafka.wire.api import Api
from trafka.wire.fields import config_resource_result
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT8, INT32, STRING

REQUEST = Message(
    "DescribeConfigsRequest",
    versions="1-4",
    flexible="4+",
    fields=[
        Field(
            "resources",
            Array([
                Field("resource_type", INT8),
                Field("resource_name", STRING),
                Field("configuration_keys", Array(STRING), nullable="0+"),
            ]),
        ),
        Field("include_synonyms", BOOL),
        Field("include_documentation", BOOL, "3+"),
    ],
)

RESPONSE = Message(
    "DescribeConfigsResponse",
    versions="1-4",
    flexible="4+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array([
                *config_resource_result(),
                Field(
                    "configs",
                    Array([
                        Field("name", STRING),
                        Field("value", STRING, nullable="0+"),
                        Field("read_only", BOOL),
                        Field("config_source", INT8, default=-1),
                        Field("is_sensitive", BOOL),
                        Field(
                            "synonyms",
                            Array([
                                Field("name", STRING),
                                Field("value", STRING, nullable="0+"),
                                Field("source", INT8),
                            ]),
                        ),
                        Field("config_type", INT8, "3+"),
                        Field("documentation", STRING, "3+", nullable="0+"),
                    ]),
                ),
            ]),
        ),
    ],
)

API = Api(32, "DescribeConfigs", REQUEST, RESPONSE)
