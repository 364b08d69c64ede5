"""Fetch (key 1): records from partitions; v4-12.

Topics are named up to v12 (v13+ uses topic ids and is not declared). v7+ adds fetch sessions;
v12 is the first flexible version and brings the tagged fields below.
"""

from trafka.wire.api import Api
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT8, INT16, INT32, INT64, RECORDS, STRING

REQUEST = Message(
    "FetchRequest",
    versions="4-12",
    flexible="12+",
    fields=[
        Field("cluster_id", STRING, "12+", nullable="12+", tag=0, tagged="12+"),
        Field("replica_id", INT32, default=-1),
        Field("max_wait_ms", INT32),
        Field("min_bytes", INT32),
        Field("max_bytes", INT32, default=0x7FFFFFFF),
        Field("isolation_level", INT8),
        Field("session_id", INT32, "7+"),
        Field("session_epoch", INT32, "7+", default=-1),
        Field(
            "topics",
            Array([
                Field("topic", STRING),
                Field(
                    "partitions",
                    Array([
                        Field("partition", INT32),
                        Field("current_leader_epoch", INT32, "9+", default=-1),
                        Field("fetch_offset", INT64),
                        Field("last_fetched_epoch", INT32, "12+", default=-1),
                        Field("log_start_offset", INT64, "5+", default=-1),
                        Field("partition_max_bytes", INT32),
                    ]),
                ),
            ]),
        ),
        Field(
            "forgotten_topics_data",
            Array([
                Field("topic", STRING),
                Field("partitions", Array(INT32)),
            ]),
            "7+",
        ),
        Field("rack_id", STRING, "11+"),
    ],
)

RESPONSE = Message(
    "FetchResponse",
    versions="4-12",
    flexible="12+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, "7+"),
        Field("session_id", INT32, "7+"),
        Field(
            "responses",
            Array([
                Field("topic", STRING),
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
                        Field(
                            "current_leader",
                            [
                                Field("leader_id", INT32, default=-1),
                                Field("leader_epoch", INT32, default=-1),
                            ],
                            "12+",
                            tag=1,
                            tagged="12+",
                        ),
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
    ],
)

API = Api(1, "Fetch", REQUEST, RESPONSE)
