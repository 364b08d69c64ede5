"""ShareAcknowledge (key 79): a share-group member acknowledges acquired records without
fetching more; v1-2 (KIP-932). Same session rules as ShareFetch, except that epoch 0 is
refused (there is nothing to acknowledge in a new session)."""

from trafka.wire.api import Api
from trafka.wire.messages.share_fetch import ACKNOWLEDGEMENT_BATCH, LEADER, NODE_ENDPOINT
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT16, INT32, STRING, UUID

REQUEST = Message(
    "ShareAcknowledgeRequest",
    versions="1-2",
    flexible="0+",
    fields=[
        Field("group_id", STRING, nullable="0+", default=None),
        Field("member_id", STRING, nullable="0+"),
        Field("share_session_epoch", INT32),
        Field("is_renew_ack", BOOL, "2+", default=False),
        Field("topics", Array([
            Field("topic_id", UUID),
            Field("partitions", Array([
                Field("partition_index", INT32),
                Field("acknowledgement_batches", Array(ACKNOWLEDGEMENT_BATCH)),
            ])),
        ])),
    ],
)

RESPONSE = Message(
    "ShareAcknowledgeResponse",
    versions="1-2",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("acquisition_lock_timeout_ms", INT32, "2+"),
        Field("responses", Array([
            Field("topic_id", UUID),
            Field("partitions", Array([
                Field("partition_index", INT32),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
                Field("current_leader", LEADER),
            ])),
        ])),
        Field("node_endpoints", Array(NODE_ENDPOINT)),
    ],
)

API = Api(79, "ShareAcknowledge", REQUEST, RESPONSE)
