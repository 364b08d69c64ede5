"""AlterReplicaLogDirs (key 34): move replicas between a broker's log directories; v1-2.

v2 is the first flexible version.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, STRING

REQUEST = Message(
    "AlterReplicaLogDirsRequest",
    versions="1-2",
    flexible="2+",
    fields=[
        Field(
            "dirs",
            Array([
                Field("path", STRING),
                Field("topics", Array([
                    Field("name", STRING),
                    Field("partitions", Array(INT32)),
                ])),
            ]),
        ),
    ],
)

RESPONSE = Message(
    "AlterReplicaLogDirsResponse",
    versions="1-2",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array([
                Field("topic_name", STRING),
                Field("partitions", Array([
                    Field("partition_index", INT32),
                    Field("error_code", INT16),
                ])),
            ]),
        ),
    ],
)

API = Api(34, "AlterReplicaLogDirs", REQUEST, RESPONSE)
