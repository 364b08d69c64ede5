"""Metadata (key 3): brokers, topics and partition leaders; v0-13.

A null topic list (v1+) asks for every topic; in v0 an empty list does. v13 adds a top-level
error code (KIP-1102: REBOOTSTRAP_REQUIRED), 0 on a broker that is serving.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT16, INT32, STRING, UUID

NO_AUTHORIZED_OPERATIONS = -(2**31)

REQUEST = Message(
    "MetadataRequest",
    versions="0-13",
    flexible="9+",
    fields=[
        Field(
            "topics",
            Array([
                Field("topic_id", UUID, "10+"),
                Field("name", STRING, nullable="10+"),
            ]),
            nullable="1+",
        ),
        Field("allow_auto_topic_creation", BOOL, "4+", default=True),
        Field("include_cluster_authorized_operations", BOOL, "8-10"),
        Field("include_topic_authorized_operations", BOOL, "8+"),
    ],
)

RESPONSE = Message(
    "MetadataResponse",
    versions="0-13",
    flexible="9+",
    fields=[
        Field("throttle_time_ms", INT32, "3+"),
        Field(
            "brokers",
            Array([
                Field("node_id", INT32),
                Field("host", STRING),
                Field("port", INT32),
                Field("rack", STRING, "1+", nullable="1+"),
            ]),
        ),
        Field("cluster_id", STRING, "2+", nullable="2+"),
        Field("controller_id", INT32, "1+", default=-1),
        Field(
            "topics",
            Array([
                Field("error_code", INT16),
                Field("name", STRING, nullable="12+"),
                Field("topic_id", UUID, "10+"),
                Field("is_internal", BOOL, "1+"),
                Field(
                    "partitions",
                    Array([
                        Field("error_code", INT16),
                        Field("partition_index", INT32),
                        Field("leader_id", INT32),
                        Field("leader_epoch", INT32, "7+", default=-1),
                        Field("replica_nodes", Array(INT32)),
                        Field("isr_nodes", Array(INT32)),
                        Field("offline_replicas", Array(INT32), "5+"),
                    ]),
                ),
                Field("topic_authorized_operations", INT32, "8+", default=NO_AUTHORIZED_OPERATIONS),
            ]),
        ),
        Field("cluster_authorized_operations", INT32, "8-10", default=NO_AUTHORIZED_OPERATIONS),
        Field("error_code", INT16, "13+"),
    ],
)

API = Api(3, "Metadata", REQUEST, RESPONSE)
