"""ShareGroupHeartbeat (key 76): a member of a share group (KIP-932) joins, heartbeats and
leaves with one request; v1 (v0 was Kafka 4.0's early access and is gone).

Member epoch 0 joins, -1 leaves. The client generates its member id (KIP-1082). A null topic
list means "unchanged since the last heartbeat". The answer carries the member's assignment
when it changed; a share group's partitions may be assigned to several members at once.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT16, INT32, STRING, UUID

TOPIC_PARTITIONS = [
    Field("topic_id", UUID),
    Field("partitions", Array(INT32)),
]

REQUEST = Message(
    "ShareGroupHeartbeatRequest",
    versions="1",
    flexible="0+",
    fields=[
        Field("group_id", STRING),
        Field("member_id", STRING),
        Field("member_epoch", INT32),
        Field("rack_id", STRING, nullable="0+", default=None),
        Field("subscribed_topic_names", Array(STRING), nullable="0+", default=None),
    ],
)

RESPONSE = Message(
    "ShareGroupHeartbeatResponse",
    versions="1",
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

API = Api(76, "ShareGroupHeartbeat", REQUEST, RESPONSE)
