"""DescribeQuorum (key 55): the KRaft metadata quorum's leader, voters and observers; v0-2.

v1 adds each replica's last fetch and last caught-up timestamps (KIP-836); v2 error messages,
each replica's directory id and the voters' endpoints (KIP-853).
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, INT64, STRING, UINT16, UUID

REQUEST = Message(
    "DescribeQuorumRequest",
    versions="0-2",
    flexible="0+",
    fields=[
        Field(
            "topics",
            Array([
                Field("topic_name", STRING),
                Field("partitions", Array([Field("partition_index", INT32)])),
            ]),
        ),
    ],
)

REPLICA_STATE = [
    Field("replica_id", INT32),
    Field("replica_directory_id", UUID, "2+"),
    Field("log_end_offset", INT64),
    Field("last_fetch_timestamp", INT64, "1+", default=-1),
    Field("last_caught_up_timestamp", INT64, "1+", default=-1),
]

RESPONSE = Message(
    "DescribeQuorumResponse",
    versions="0-2",
    flexible="0+",
    fields=[
        Field("error_code", INT16),
        Field("error_message", STRING, "2+", nullable="2+", default=None),
        Field(
            "topics",
            Array([
                Field("topic_name", STRING),
                Field(
                    "partitions",
                    Array([
                        Field("partition_index", INT32),
                        Field("error_code", INT16),
                        Field("error_message", STRING, "2+", nullable="2+", default=None),
                        Field("leader_id", INT32),
                        Field("leader_epoch", INT32),
                        Field("high_watermark", INT64),
                        Field("current_voters", Array(REPLICA_STATE)),
                        Field("observers", Array(REPLICA_STATE)),
                    ]),
                ),
            ]),
        ),
        Field(
            "nodes",
            Array([
                Field("node_id", INT32),
                Field("listeners", Array([
                    Field("name", STRING),
                    Field("host", STRING),
                    Field("port", UINT16),
                ])),
            ]),
            "2+",
        ),
    ],
)

API = Api(55, "DescribeQuorum", REQUEST, RESPONSE)
