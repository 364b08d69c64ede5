"""ConsumerGroupHeartbeat (key 68): a member of a KIP-848 consumer group joins, heartbeats and
leaves with one request; v0-1.

Member epoch 0 joins, -1 leaves, -2 leaves a static member temporarily. Fields left null mean
"unchanged since the last heartbeat". v1 adds the subscribed topic regex and (KIP-1082) the
client generates its member id, so a v1 member id is never empty.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, STRING, UUID

TOPIC_PARTITIONS = [
    Field("topic_id", UUID),
    Field("partitions", Array(INT32)),
]

REQUEST = Message(
    "ConsumerGroupHeartbeatRequest",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("group_id", STRING),
        Field("member_id", STRING),
        Field("member_epoch", INT32),
        Field("instance_id", STRING, nullable="0+", default=None),
        Field("rack_id", STRING, nullable="0+", default=None),
        Field("rebalance_timeout_ms", INT32, default=-1),
        Field("subscribed_topic_names", Array(STRING), nullable="0+", default=None),
        Field("subscribed_topic_regex", STRING, "1+", nullable="1+", default=None),
        Field("server_assignor", STRING, nullable="0+", default=None),
        Field("topic_partitions", Array(TOPIC_PARTITIONS), nullable="0+", default=None),
    ],
)

RESPONSE = Message(
    "ConsumerGroupHeartbeatResponse",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("member_id", STRING, nullable="0+", default=None),
        Field("member_epoch", INT32),
        Field("heartbeat_interval_ms", INT32),
        Field("assignment", [Field("topic_partitions", Array(TOPIC_PARTITIONS))], nullable="0+", default=None),
    ],
)

API = Api(68, "ConsumerGroupHeartbeat", REQUEST, RESPONSE)
