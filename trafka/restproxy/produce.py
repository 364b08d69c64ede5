"""Records from HTTP to a topic, as a Kafka producer sends them: a partition picked per record
(the one asked for; else murmur2 of the key, as Kafka's default partitioner; else round robin),
the records of a request grouped into one batch per partition (split to stay well under
message.max.bytes), each batch a Produce (acks=all) to the partition's leader with the
caller's principal. One answer per record, in the order they came: where it was written, or
the RestError that refused it (the whole batch shares a broker's refusal)."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import trio

from trafka.restproxy import errors
from trafka.restproxy.client import BACKOFF_S, PRODUCE, RETRY_MS
from trafka.wire import records as rec
from trafka.wire.errors import ErrorCode

BATCH_BYTES = 256 * 1024  # a batch is closed past this size (message.max.bytes is 1 MiB by default)
_round_robin = itertools.count()


@dataclass(slots=True)
class Outgoing:
    key: bytes | None
    value: bytes | None
    headers: list = field(default_factory=list)
    timestamp_ms: int | None = None
    partition: int | None = None


@dataclass(slots=True)
class Written:
    partition: int
    offset: int
    timestamp_ms: int


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 (Utils.murmur2), as an unsigned 32-bit number."""
    m, length = 0x5BD1E995, len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = (int.from_bytes(data[i:i + 4], "little") * m) & 0xFFFFFFFF
        k = ((k ^ (k >> 24)) * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    tail, extra = length - length % 4, length % 4
    if extra == 3:
        h ^= data[tail + 2] << 16
    if extra >= 2:
        h ^= data[tail + 1] << 8
    if extra >= 1:
        h = ((h ^ data[tail]) * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    return h ^ (h >> 15)


def partition_for(key: bytes | None, count: int) -> int:
    if key is None:
        return next(_round_robin) % count
    return (murmur2(key) & 0x7FFFFFFF) % count


async def partition_count(kafka, topic: str) -> int:
    """The topic's partition count, asked as a producer asks: an unknown topic is created when
    the broker creates topics on first use (auto.create.topics.enable) and the caller may;
    otherwise it is Confluent's 404/40401, as its producer's "not present in metadata"."""
    with trio.move_on_after(RETRY_MS / 1000):
        while True:
            found = (await kafka.metadata([topic], auto_create=True)).topics[0]
            if found.error_code != ErrorCode.LEADER_NOT_AVAILABLE and found.partitions:
                break
            if found.error_code not in (ErrorCode.NONE, ErrorCode.LEADER_NOT_AVAILABLE):
                break
            await trio.sleep(BACKOFF_S)  # just created: its partitions are not described yet
    if found.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
        raise errors.topic_not_found()
    errors.check(found.error_code, f"Not authorized to access topics: [{topic}]"
                 if found.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED else None)
    if not found.partitions:
        raise errors.leader_not_available()
    return len(found.partitions)


async def produce(kafka, topic: str, outgoing: list, count: int) -> list:
    """Write the records (an item may already be a RestError: answered as it is); one answer
    per item: Written, or a RestError."""
    answers: list = list(outgoing)
    by_partition: dict[int, list[int]] = {}
    for i, item in enumerate(outgoing):
        if isinstance(item, errors.RestError):
            continue
        p = item.partition if item.partition is not None else partition_for(item.key, count)
        if not 0 <= p < count:
            answers[i] = errors.partition_not_found()
            continue
        item.partition = p
        by_partition.setdefault(p, []).append(i)
    for p, indexes in by_partition.items():
        for chunk in _chunks(outgoing, indexes):
            results = await _send(kafka, topic, p, [outgoing[i] for i in chunk])
            for i, result in zip(chunk, results):
                answers[i] = result
    return answers


def _chunks(outgoing: list, indexes: list[int]):
    chunk, size = [], 0
    for i in indexes:
        item = outgoing[i]
        weight = len(item.key or b"") + len(item.value or b"") + 64
        if chunk and size + weight > BATCH_BYTES:
            yield chunk
            chunk, size = [], 0
        chunk.append(i)
        size += weight
    if chunk:
        yield chunk


async def _send(kafka, topic: str, partition: int, items: list[Outgoing]) -> list:
    now = int(time.time() * 1000)
    batch = rec.encode_batch([rec.Record(o.key, o.value, o.headers, o.timestamp_ms if o.timestamp_ms is not None else now)
                              for o in items])
    body = {"transactional_id": None, "acks": -1, "timeout_ms": 30000,
            "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": batch}]}]}
    try:
        answer = await kafka.to_leader(topic, partition, PRODUCE, body,
                                       lambda a: a.responses[0].partition_responses[0].error_code)
    except LookupError as exc:
        refusal = errors.from_kafka(exc.args[0] if exc.args else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        return [refusal] * len(items)
    result = answer.responses[0].partition_responses[0]
    if result.error_code != ErrorCode.NONE:
        message = result.error_message
        if result.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
            message = f"Not authorized to access topics: [{topic}]"
        return [errors.from_kafka(result.error_code, message)] * len(items)
    appended = result.log_append_time_ms if result.log_append_time_ms >= 0 else None
    return [Written(partition, result.base_offset + n,
                    appended if appended is not None else (o.timestamp_ms if o.timestamp_ms is not None else now))
            for n, o in enumerate(items)]
