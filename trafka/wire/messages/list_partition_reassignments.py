"""ListPartitionReassignments (key 46): the reassignments in progress (KIP-455); v0."""

from trafka.wire.api import Api
from trafka.wire.fields import by_topic
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, STRING

REQUEST = Message(
    "ListPartitionReassignmentsRequest",
    versions="0",
    flexible="0+",
    fields=[
        Field("timeout_ms", INT32, default=60000),
        Field(
            "topics",
            Array([
                Field("name", STRING),
                Field("partition_indexes", Array(INT32)),
            ]),
            nullable="0+",
            default=None,
        ),
    ],
)

RESPONSE = Message(
    "ListPartitionReassignmentsResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        by_topic([
            Field("partition_index", INT32),
            Field("replicas", Array(INT32)),
            Field("adding_replicas", Array(INT32)),
            Field("removing_replicas", Array(INT32)),
        ]),
    ],
)

API = Api(46, "ListPartitionReassignments", REQUEST, RESPONSE)
