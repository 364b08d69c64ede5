"""FindCoordinator (key 10): the broker coordinating a group or transaction; v0-6.

Up to v3 one key per request; v4 batches keys and answers one coordinator per key. v5 adds the
TRANSACTION_ABORTABLE error (KIP-890), v6 the share-group key type 2 (KIP-932).
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT8, INT16, INT32, STRING

REQUEST = Message(
    "FindCoordinatorRequest",
    versions="0-6",
    flexible="3+",
    fields=[
        Field("key", STRING, "0-3"),
        Field("key_type", INT8, "1+"),
        Field("coordinator_keys", Array(STRING), "4+"),
    ],
)

RESPONSE = Message(
    "FindCoordinatorResponse",
    versions="0-6",
    flexible="3+",
    fields=[
        Field("throttle_time_ms", INT32, "1+"),
        Field("error_code", INT16, "0-3"),
        Field("error_message", STRING, "1-3", nullable="1-3"),
        Field("node_id", INT32, "0-3"),
        Field("host", STRING, "0-3"),
        Field("port", INT32, "0-3"),
        Field(
            "coordinators",
            Array([
                Field("key", STRING),
                Field("node_id", INT32),
                Field("host", STRING),
                Field("port", INT32),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="4+"),
            ]),
            "4+",
        ),
    ],
)

API = Api(10, "FindCoordinator", REQUEST, RESPONSE)
