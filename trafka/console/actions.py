"""The console's actions, as Kafka requests through the broker's own dispatch.

Each action builds the request a Kafka admin client or producer would send, encodes it with
the wire codec and hands the frame to `connection.dispatch`, exactly as a connection does: the
same handlers, checks, error codes, faults and request metrics as the wire API. Only the socket
is skipped. A Kafka error comes back as `ActionFailed` with the error's name and message.
"""

from __future__ import annotations

import itertools
import time

from trafka.broker.network.connection import dispatch
from trafka.wire import framing
from trafka.wire import records as rec
from trafka.wire.errors import ErrorCode
from trafka.wire.messages import APIS

CLIENT_ID = "trafka-console"
_correlation = itertools.count(1)

PRODUCE, LIST_OFFSETS, OFFSET_COMMIT, CREATE_TOPICS, DELETE_TOPICS, DELETE_RECORDS = 0, 2, 8, 19, 20, 21
VERSIONS = {PRODUCE: 9, LIST_OFFSETS: 7, OFFSET_COMMIT: 8, CREATE_TOPICS: 7, DELETE_TOPICS: 6, DELETE_RECORDS: 2}
EARLIEST, LATEST = -2, -1


class ActionFailed(Exception):
    """The broker answered with a Kafka error (its name and message go to the user)."""

    def __init__(self, error: int, message: str | None = None):
        name = ErrorCode(error).name
        super().__init__(f"{name}: {message}" if message else name)
        self.error = ErrorCode(error)


async def call(broker, api_key: int, body: dict):
    """Send one request through dispatch and decode the answer."""
    api = APIS[api_key]
    version = VERSIONS[api_key]
    frame = framing.encode_request(api, version, next(_correlation), CLIENT_ID, body)
    parts = await dispatch(broker, frame[4:], "console")
    data = b"".join(part if isinstance(part, (bytes, bytearray, memoryview)) else part.read() for part in parts)
    _, response = framing.decode_response(api, version, data[4:])
    return response


def _check(error_code: int, message: str | None = None) -> None:
    if error_code != ErrorCode.NONE:
        raise ActionFailed(error_code, message)


async def create_topic(broker, name: str, partitions: int, configs: dict[str, str]) -> dict:
    response = await call(broker, CREATE_TOPICS, {
        "topics": [{"name": name, "num_partitions": partitions, "replication_factor": -1, "assignments": [],
                    "configs": [{"name": k, "value": v} for k, v in configs.items()]}],
        "timeout_ms": 30000, "validate_only": False,
    })
    topic = response.topics[0]
    _check(topic.error_code, topic.error_message)
    return {"name": topic.name, "topic_id": str(topic.topic_id), "partitions": topic.num_partitions}


async def delete_topic(broker, name: str) -> dict:
    meta = broker.logs.topics.get(name)
    if meta is None:
        raise LookupError(f"unknown topic {name!r}")
    response = await call(broker, DELETE_TOPICS, {"topics": [{"name": name, "topic_id": meta.topic_id}], "timeout_ms": 30000})
    result = response.responses[0]
    _check(result.error_code, result.error_message)
    return {"deleted": name}


async def produce(broker, topic: str, partition: int, key: bytes | None, value: bytes | None,
                  headers: list[tuple[str, bytes | None]]) -> dict:
    batch = rec.encode_batch([rec.Record(key, value, headers, int(time.time() * 1000))])
    response = await call(broker, PRODUCE, {
        "transactional_id": None, "acks": -1, "timeout_ms": 30000,
        "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": batch}]}],
    })
    result = response.responses[0].partition_responses[0]
    _check(result.error_code, result.error_message)
    return {"topic": topic, "partition": partition, "offset": result.base_offset}


async def delete_records(broker, topic: str, partition: int, offset: int) -> dict:
    response = await call(broker, DELETE_RECORDS, {
        "topics": [{"name": topic, "partitions": [{"partition_index": partition, "offset": offset}]}], "timeout_ms": 30000,
    })
    result = response.topics[0].partitions[0]
    _check(result.error_code)
    return {"topic": topic, "partition": partition, "log_start_offset": result.low_watermark}


async def list_offset(broker, topic: str, partition: int, timestamp: int) -> int:
    """ListOffsets: EARLIEST, LATEST, or the first offset at or after a timestamp (the log
    end offset when no record is that new, as kafka-consumer-groups --to-datetime does)."""
    response = await call(broker, LIST_OFFSETS, {
        "replica_id": -1, "isolation_level": 0,
        "topics": [{"name": topic, "partitions": [{"partition_index": partition, "timestamp": timestamp}]}],
    })
    result = response.topics[0].partitions[0]
    _check(result.error_code)
    if result.offset < 0:
        return await list_offset(broker, topic, partition, LATEST)
    return result.offset


async def reset_offsets(broker, group_id: str, to: str, partitions: list[tuple[str, int]],
                        offset: int | None = None, timestamp: int | None = None) -> dict:
    """kafka-consumer-groups --reset-offsets for an Empty group: the new offsets are committed
    with OffsetCommit as a client outside the group (generation -1), like the Admin client's
    alterConsumerGroupOffsets."""
    targets = {}
    for topic, p in partitions:
        if to == "earliest":
            targets[(topic, p)] = await list_offset(broker, topic, p, EARLIEST)
        elif to == "latest":
            targets[(topic, p)] = await list_offset(broker, topic, p, LATEST)
        elif to == "timestamp":
            targets[(topic, p)] = await list_offset(broker, topic, p, timestamp)
        else:
            log = broker.logs.log(topic, p)
            # Kafka's tool clamps an offset outside the log to its ends.
            targets[(topic, p)] = min(max(offset, log.log_start_offset), log.log_end_offset)
    by_topic: dict[str, list] = {}
    for (topic, p), value in sorted(targets.items()):
        by_topic.setdefault(topic, []).append({"partition_index": p, "committed_offset": value,
                                               "committed_leader_epoch": -1, "committed_metadata": ""})
    response = await call(broker, OFFSET_COMMIT, {
        "group_id": group_id, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": t, "partitions": parts} for t, parts in by_topic.items()],
    })
    for topic in response.topics:
        for p in topic.partitions:
            _check(p.error_code)
    return {"group_id": group_id, "offsets": [{"topic": t, "partition": p, "committed_offset": o}
                                              for (t, p), o in sorted(targets.items())]}
