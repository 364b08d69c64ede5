"""DeleteTopics (key 20): delete topics; v1-6.

Up to v5 topics are a list of names; v6 lists (name, topic id) pairs, either may identify it.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, STRING, UUID

REQUEST = Message(
    "DeleteTopicsRequest",
    versions="1-6",
    flexible="4+",
    fields=[
        Field(
            "topics",
            Array([
                Field("name", STRING, nullable="6+"),
                Field("topic_id", UUID),
            ]),
            "6+",
        ),
        Field("topic_names", Array(STRING), "0-5"),
        Field("timeout_ms", INT32),
    ],
)

RESPONSE = Message(
    "DeleteTopicsResponse",
    versions="1-6",
    flexible="4+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "responses",
            Array([
                Field("name", STRING, nullable="6+"),
                Field("topic_id", UUID, "6+"),
                Field("error_code", INT16),
                Field("error_message", STRING, "5+", nullable="5+"),
            ]),
        ),
    ],
)

API = Api(20, "DeleteTopics", REQUEST, RESPONSE)
