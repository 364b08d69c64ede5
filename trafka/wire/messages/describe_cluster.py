"""DescribeCluster (key 60): the cluster id, the controller and the brokers; v0-2.

v1 adds the endpoint type (brokers or controllers, KIP-919), v2 fenced brokers (KIP-1073).
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT8, INT16, INT32, STRING

REQUEST = Message(
    "DescribeClusterRequest",
    versions="0-2",
    flexible="0+",
    fields=[
        Field("include_cluster_authorized_operations", BOOL),
        Field("endpoint_type", INT8, "1+", default=1),
        Field("include_fenced_brokers", BOOL, "2+", default=False),
    ],
)

RESPONSE = Message(
    "DescribeClusterResponse",
    versions="0-2",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("endpoint_type", INT8, "1+", default=1),
        Field("cluster_id", STRING),
        Field("controller_id", INT32, default=-1),
        Field(
            "brokers",
            Array([
                Field("broker_id", INT32),
                Field("host", STRING),
                Field("port", INT32),
                Field("rack", STRING, nullable="0+", default=None),
                Field("is_fenced", BOOL, "2+", default=False),
            ]),
        ),
        Field("cluster_authorized_operations", INT32, default=-2147483648),
    ],
)

API = Api(60, "DescribeCluster", REQUEST, RESPONSE)
