"""TxnOffsetCommit (key 28): commit offsets inside a transaction; v0-5.

v2 adds the committed leader epoch, v3 the member id, group instance id and generation (and
is flexible), v4 adds TRANSACTION_ABORTABLE. v5 has v4's fields and marks a transaction
version 2 producer (KIP-890: the commit adds the group's partition to the transaction).
"""

from trafka.wire.api import Api
from trafka.wire.fields import by_topic, committed_offset, partition_errors
from trafka.wire.schema import Field, Message
from trafka.wire.types import INT16, INT32, INT64, STRING

REQUEST = Message(
    "TxnOffsetCommitRequest",
    versions="0-5",
    flexible="3+",
    fields=[
        Field("transactional_id", STRING),
        Field("group_id", STRING),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("generation_id", INT32, "3+", default=-1),
        Field("member_id", STRING, "3+", default=""),
        Field("group_instance_id", STRING, "3+", nullable="3+", default=None),
        by_topic(committed_offset("2+")),
    ],
)

RESPONSE = Message(
    "TxnOffsetCommitResponse",
    versions="0-5",
    flexible="3+",
    fields=[
        Field("throttle_time_ms", INT32),
        by_topic(partition_errors()),
    ],
)

API = Api(28, "TxnOffsetCommit", REQUEST, RESPONSE)
