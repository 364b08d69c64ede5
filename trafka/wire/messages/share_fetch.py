"""ShareFetch (key 78): a share-group member fetches records it acquires for a time, and
acknowledges earlier ones in the same request; v1-2 (KIP-932).

The share session epoch: 0 opens a session (no acknowledgements), -1 closes it (only
acknowledgements), else the next epoch of the member's session. The answer's records are whole
batches; `acquired_records` says which offsets in them this member acquired, and with which
delivery count. Acknowledge types: 0 gap, 1 accept, 2 release, 3 reject (v2 adds 4 renew).
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT8, INT16, INT32, INT64, RECORDS, STRING, UUID

ACKNOWLEDGEMENT_BATCH = [
    Field("first_offset", INT64),
    Field("last_offset", INT64),
    Field("acknowledge_types", Array(INT8)),
]

LEADER = [Field("leader_id", INT32), Field("leader_epoch", INT32)]

NODE_ENDPOINT = [
    Field("node_id", INT32),
    Field("host", STRING),
    Field("port", INT32),
    Field("rack", STRING, nullable="0+", default=None),
]

REQUEST = Message(
    "ShareFetchRequest",
    versions="1-2",
    flexible="0+",
    fields=[
        Field("group_id", STRING, nullable="0+", default=None),
        Field("member_id", STRING, nullable="0+"),
        Field("share_session_epoch", INT32),
        Field("max_wait_ms", INT32),
        Field("min_bytes", INT32),
        Field("max_bytes", INT32, default=0x7FFFFFFF),
        Field("max_records", INT32, "1+"),
        Field("batch_size", INT32, "1+"),
        Field("share_acquire_mode", INT8, "2+", default=0),
        Field("is_renew_ack", BOOL, "2+", default=False),
        Field("topics", Array([
            Field("topic_id", UUID),
            Field("partitions", Array([
                Field("partition_index", INT32),
                Field("acknowledgement_batches", Array(ACKNOWLEDGEMENT_BATCH)),
            ])),
        ])),
        Field("forgotten_topics_data", Array([
            Field("topic_id", UUID),
            Field("partitions", Array(INT32)),
        ])),
    ],
)

RESPONSE = Message(
    "ShareFetchResponse",
    versions="1-2",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("acquisition_lock_timeout_ms", INT32, "1+"),
        Field("responses", Array([
            Field("topic_id", UUID),
            Field("partitions", Array([
                Field("partition_index", INT32),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
                Field("acknowledge_error_code", INT16),
                Field("acknowledge_error_message", STRING, nullable="0+", default=None),
                Field("current_leader", LEADER),
                Field("records", RECORDS, nullable="0+"),
                Field("acquired_records", Array([
                    Field("first_offset", INT64),
                    Field("last_offset", INT64),
                    Field("delivery_count", INT16),
                ])),
            ])),
        ])),
        Field("node_endpoints", Array(NODE_ENDPOINT)),
    ],
)

API = Api(78, "ShareFetch", REQUEST, RESPONSE)
