"""OffsetFetch (key 9): a group's committed offsets; v1-10.

Up to v7 one group per request (a null topic list, v2+, means all topics); v8 asks for
several groups at once and answers per group; v9 adds each group's member id and member epoch
(KIP-848: checked for consumer-protocol groups, STALE_MEMBER_EPOCH / UNKNOWN_MEMBER_ID); v10
names topics by id instead of by name, in the request and the answer (UNKNOWN_TOPIC_ID).
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import BOOL, INT16, INT32, INT64, STRING, UUID

REQUEST = Message(
    "OffsetFetchRequest",
    versions="1-10",
    flexible="6+",
    fields=[
        Field("group_id", STRING, "0-7"),
        Field(
            "topics",
            Array([
                Field("name", STRING),
                Field("partition_indexes", Array(INT32)),
            ]),
            "0-7",
            nullable="2-7",
        ),
        Field(
            "groups",
            Array([
                Field("group_id", STRING),
                Field("member_id", STRING, "9+", nullable="9+", default=None),
                Field("member_epoch", INT32, "9+", default=-1),
                Field(
                    "topics",
                    Array([
                        Field("name", STRING, "8-9"),
                        Field("topic_id", UUID, "10+"),
                        Field("partition_indexes", Array(INT32)),
                    ]),
                    nullable="8+",
                ),
            ]),
            "8+",
        ),
        Field("require_stable", BOOL, "7+"),
    ],
)

RESPONSE = Message(
    "OffsetFetchResponse",
    versions="1-10",
    flexible="6+",
    fields=[
        Field("throttle_time_ms", INT32, "3+"),
        Field(
            "topics",
            Array([
                Field("name", STRING),
                Field("partitions", Array([
                    Field("partition_index", INT32),
                    Field("committed_offset", INT64),
                    Field("committed_leader_epoch", INT32, "5+", default=-1),
                    Field("metadata", STRING, nullable="0+"),
                    Field("error_code", INT16),
                ])),
            ]),
            "0-7",
        ),
        Field("error_code", INT16, "2-7"),
        Field(
            "groups",
            Array([
                Field("group_id", STRING),
                Field("topics", Array([
                    Field("name", STRING, "8-9"),
                    Field("topic_id", UUID, "10+"),
                    Field("partitions", Array([
                        Field("partition_index", INT32),
                        Field("committed_offset", INT64),
                        Field("committed_leader_epoch", INT32, default=-1),
                        Field("metadata", STRING, nullable="8+"),
                        Field("error_code", INT16),
                    ])),
                ])),
                Field("error_code", INT16),
            ]),
            "8+",
        ),
    ],
)

API = Api(9, "OffsetFetch", REQUEST, RESPONSE)
