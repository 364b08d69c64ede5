"""Fetch (key 1): records from partitions; v4-18.

v7+ adds fetch sessions; v12 is the first flexible version and brings the tagged fields below.
From v13 topics are named by topic id (KIP-516), v15 moves the follower's replica id into a
tagged ReplicaState (KIP-903), v16 adds the leaders' endpoints (KIP-951), v17 the follower's
directory id (KIP-853) and v18 the follower's high watermark (KIP-1166); the last four matter
only to followers and to NOT_LEADER_OR_FOLLOWER answers.
"""

from trafka.wire.api import Api
from trafka.wire.fields import leader_hint, node_endpoints
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT8, INT16, INT32, INT64, RECORDS, STRING, UUID

NO_HIGH_WATERMARK = 2**63 - 1  # a follower that does not send its high watermark (v18)

REQUEST = Message(
    "FetchRequest",
    versions="4-18",
    flexible="12+",
    fields=[
        Field("cluster_id", STRING, "12+", nullable="12+", tag=0, tagged="12+"),
        Field("replica_id", INT32, "0-14", default=-1),
        Field(
            "replica_state",
            [
                Field("replica_id", INT32, default=-1),
                Field("replica_epoch", INT64, default=-1),
            ],
            "15+",
            tag=1,
            tagged="15+",
        ),
        Field("max_wait_ms", INT32),
        Field("min_bytes", INT32),
        Field("max_bytes", INT32, default=0x7FFFFFFF),
        Field("isolation_level", INT8),
        Field("session_id", INT32, "7+"),
        Field("session_epoch", INT32, "7+", default=-1),
        Field(
            "topics",
            Array([
                Field("topic", STRING, "0-12"),
                Field("topic_id", UUID, "13+"),
                Field(
                    "partitions",
                    Array([
                        Field("partition", INT32),
                        Field("current_leader_epoch", INT32, "9+", default=-1),
                        Field("fetch_offset", INT64),
                        Field("last_fetched_epoch", INT32, "12+", default=-1),
                        Field("log_start_offset", INT64, "5+", default=-1),
                        Field("partition_max_bytes", INT32),
                        Field("replica_directory_id", UUID, "17+", tag=0, tagged="17+"),
                        Field("high_watermark", INT64, "18+", tag=1, tagged="18+", default=NO_HIGH_WATERMARK),
                    ]),
                ),
            ]),
        ),
        Field(
            "forgotten_topics_data",
            Array([
                Field("topic", STRING, "7-12"),
                Field("topic_id", UUID, "13+"),
                Field("partitions", Array(INT32)),
            ]),
            "7+",
        ),
        Field("rack_id", STRING, "11+"),
    ],
)

RESPONSE = Message(
    "FetchResponse",
    versions="4-18",
    flexible="12+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, "7+"),
        Field("session_id", INT32, "7+"),
        Field(
            "responses",
            Array([
                Field("topic", STRING, "0-12"),
                Field("topic_id", UUID, "13+"),
                Field(
                    "partitions",
                    Array([
                        Field("partition_index", INT32),
                        Field("error_code", INT16),
                        Field("high_watermark", INT64),
                        Field("last_stable_offset", INT64, default=-1),
                        Field("log_start_offset", INT64, "5+", default=-1),
                        # Absent (None) unless the follower's log diverged from the leader's.
                        Field(
                            "diverging_epoch",
                            [
                                Field("epoch", INT32, default=-1),
                                Field("end_offset", INT64, default=-1),
                            ],
                            "12+",
                            tag=0,
                            tagged="12+",
                        ),
                        leader_hint("12+", tag=1),
                        Field(
                            "snapshot_id",
                            [
                                Field("end_offset", INT64, default=-1),
                                Field("epoch", INT32, default=-1),
                            ],
                            "12+",
                            tag=2,
                            tagged="12+",
                        ),
                        Field(
                            "aborted_transactions",
                            Array([
                                Field("producer_id", INT64),
                                Field("first_offset", INT64),
                            ]),
                            nullable="4+",
                        ),
                        Field("preferred_read_replica", INT32, "11+", default=-1),
                        Field("records", RECORDS, nullable="0+"),
                    ]),
                ),
            ]),
        ),
        node_endpoints("16+"),
    ],
)

API = Api(1, "Fetch", REQUEST, RESPONSE)
