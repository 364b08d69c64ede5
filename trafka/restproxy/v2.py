"""REST Proxy API v2: topics, partitions and their offsets, brokers, and produce with the
embedded formats (`application/vnd.kafka.{binary,json,avro,jsonschema,protobuf}.v2+json`), answered in
`application/vnd.kafka.v2+json`. The consumer instances (`/consumers/...`) are consumers.py's.

Produce answers one offset per record ({"partition", "offset", "error_code", "error"}); a
record the broker refused carries error_code 1 (or 2 when retrying may succeed) and Kafka's
message. A request refused as a whole (no WRITE on the topic: 403/40301; unknown topic, when the
broker does not create it: 404/40401; unknown partition: 404/40402; a schema missing:
422/42201-42202) writes nothing.
"""

from __future__ import annotations

from starlette.routing import Route

from trafka.restproxy import answers, errors, formats, produce
from trafka.restproxy.client import LIST_OFFSETS
from trafka.restproxy.v3 import TOPIC, described_cluster, describe_configs, partition_of, topic_metadata, topics_metadata
from trafka.wire.errors import ErrorCode

EARLIEST, LATEST = -2, -1


def _partition_json(p) -> dict:
    return {"partition": p.partition_index, "leader": p.leader_id,
            "replicas": [{"broker": b, "leader": b == p.leader_id, "in_sync": b in p.isr_nodes} for b in p.replica_nodes]}


def _partition_id(request) -> int:
    try:
        return int(request.path_params["partition"])
    except ValueError:
        raise errors.partition_not_found() from None


async def list_topics(request):
    topics = await topics_metadata(answers.client(request))
    return answers.v2([t.name for t in topics if t.error_code == ErrorCode.NONE])


async def get_topic(request):
    kafka = answers.client(request)
    topic = await topic_metadata(kafka, request.path_params["topic"])
    configs = {c.name: c.value for c in await describe_configs(kafka, TOPIC, topic.name) if not c.is_sensitive}
    partitions = sorted(topic.partitions, key=lambda p: p.partition_index)
    return answers.v2({"name": topic.name, "configs": configs, "partitions": [_partition_json(p) for p in partitions]})


async def list_partitions(request):
    topic = await topic_metadata(answers.client(request), request.path_params["topic"])
    return answers.v2([_partition_json(p) for p in sorted(topic.partitions, key=lambda p: p.partition_index)])


async def _partition(request):
    kafka = answers.client(request)
    topic = await topic_metadata(kafka, request.path_params["topic"])
    try:
        return kafka, topic, partition_of(topic, _partition_id(request))
    except errors.RestError:
        raise errors.partition_not_found() from None


async def get_partition(request):
    _, _, p = await _partition(request)
    return answers.v2(_partition_json(p))


async def _offset(kafka, topic: str, partition: int, timestamp: int) -> int:
    body = {"replica_id": -1, "isolation_level": 0,
            "topics": [{"name": topic, "partitions": [{"partition_index": partition, "current_leader_epoch": -1,
                                                       "timestamp": timestamp}]}]}
    try:
        answer = await kafka.to_leader(topic, partition, LIST_OFFSETS, body, lambda a: a.topics[0].partitions[0].error_code)
    except LookupError:  # deleted meanwhile
        raise errors.partition_not_found() from None
    result = answer.topics[0].partitions[0]
    errors.check(result.error_code)
    return result.offset


async def get_offsets(request):
    kafka, topic, p = await _partition(request)
    return answers.v2({"beginning_offset": await _offset(kafka, topic.name, p.partition_index, EARLIEST),
                       "end_offset": await _offset(kafka, topic.name, p.partition_index, LATEST)})


async def list_brokers(request):
    found = await described_cluster(answers.client(request))
    return answers.v2({"brokers": sorted(b.broker_id for b in found.brokers)})


# --- produce ---------------------------------------------------------------------------------

def _format(request) -> str:
    fmt = formats.embedded_format(request.headers.get("content-type", ""))
    if fmt is None:
        raise errors.RestError(415, 415, "HTTP 415 Unsupported Media Type")
    return fmt


def _schema(broker, topic: str, fmt: str, body: dict, side: str, needed: bool) -> formats.Schema | None:
    """The key's or value's schema for avro / jsonschema: `<side>_schema_id`, or `<side>_schema`
    registered under `<topic>-<side>`."""
    if body.get(f"{side}_schema_id") is not None:
        schema = formats.by_id(broker, answers.integer(body[f"{side}_schema_id"], f"{side}_schema_id"))
    elif body.get(f"{side}_schema") is not None:
        text = body[f"{side}_schema"]
        schema = formats.register(broker, f"{topic}-{side}", fmt, text if isinstance(text, str) else str(text))
    elif needed:
        raise errors.key_schema_missing() if side == "key" else errors.value_schema_missing()
    else:
        return None
    if schema.fmt != fmt:
        raise errors.invalid_schema(f"schema {schema.id} is not a {fmt} schema")
    return schema


def _encoder(broker, topic: str, fmt: str, body: dict, records: list, side: str):
    if fmt == "binary":
        return None, formats.binary
    if fmt == "json":
        return None, formats.json_bytes
    schema = _schema(broker, topic, fmt, body, side, any(r.get(side) is not None for r in records))
    return schema, (lambda data: formats.with_schema(schema, data))


async def _produce(request, partition: int | None):
    fmt = _format(request)
    topic = request.path_params["topic"]
    body = await answers.json_object(request)
    records = body.get("records")
    if not isinstance(records, list) or not records or not all(isinstance(r, dict) for r in records):
        raise errors.unprocessable("records must be a non-empty list of objects", 422)
    broker = request.app.state.broker
    kafka = answers.client(request)
    count = await produce.partition_count(kafka, topic)
    if partition is not None and not 0 <= partition < count:
        raise errors.partition_not_found()
    key_schema, encode_key = _encoder(broker, topic, fmt, body, records, "key")
    value_schema, encode_value = _encoder(broker, topic, fmt, body, records, "value")
    outgoing = []
    for r in records:
        wanted = partition if partition is not None else r.get("partition")
        outgoing.append(produce.Outgoing(encode_key(r.get("key")), encode_value(r.get("value")), [], None,
                                         None if wanted is None else answers.integer(wanted, "partition")))
    results = await produce.produce(kafka, topic, outgoing, count)
    refused = [r for r in results if isinstance(r, errors.RestError)]
    if refused and len(refused) == len(results) and refused[0].status in (401, 403, 404):
        raise refused[0]  # nothing was written: the request's answer is the refusal
    offsets = []
    for r in results:
        if isinstance(r, errors.RestError):
            offsets.append({"partition": None, "offset": None, "error_code": 2 if r.error_code == 50003 else 1,
                            "error": r.message})
        else:
            offsets.append({"partition": r.partition, "offset": r.offset, "error_code": None, "error": None})
    return answers.v2({"key_schema_id": key_schema.id if key_schema else None,
                       "value_schema_id": value_schema.id if value_schema else None, "offsets": offsets})


async def produce_to_topic(request):
    return await _produce(request, None)


async def produce_to_partition(request):
    return await _produce(request, _partition_id(request))


def routes() -> list[Route]:
    t = "/topics/{topic}"
    return [
        Route("/topics", list_topics, methods=["GET"]),
        Route(t, get_topic, methods=["GET"]),
        Route(t, produce_to_topic, methods=["POST"]),
        Route(t + "/partitions", list_partitions, methods=["GET"]),
        Route(t + "/partitions/{partition}", get_partition, methods=["GET"]),
        Route(t + "/partitions/{partition}", produce_to_partition, methods=["POST"]),
        Route(t + "/partitions/{partition}/offsets", get_offsets, methods=["GET"]),
        Route("/brokers", list_brokers, methods=["GET"]),
    ]
