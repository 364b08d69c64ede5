"""REST Proxy API v3: POST /v3/clusters/{c}/topics/{t}/records, Confluent's produce, and
POST .../records:batch, its batch produce (entries with ids; 207 with successes and failures).

The body is one JSON object, or several one after another (streamed mode); the answer is
200 with one JSON object per record, in order, each either the record's place
(`error_code` 200, partition_id, offset, timestamp, and the key's and value's type, size and
schema) or its error (`error_code` and `message`, e.g. 40301 without WRITE on the topic,
40401 for an unknown topic the broker does not create, 400 for a malformed record), as
Confluent's streaming answer.
Errors of the request itself (unknown cluster, 401, 413) keep their HTTP status.

A key or value is {"type": BINARY | JSON | STRING | AVRO | JSONSCHEMA | PROTOBUF, "data": ...},
with a schema for AVRO / JSONSCHEMA / PROTOBUF named by `schema_id`, by `subject` (or the topic's
`<topic>-key` / `<topic>-value`) and `schema_version` (latest when absent), or given as
`schema` (registered under that subject). Without `type`, a schema named decides the format,
else it is BINARY. `subject_name_strategy` is TOPIC_NAME (the default), RECORD_NAME or
TOPIC_RECORD_NAME, named by the schema given or its id.
"""

from __future__ import annotations

import functools
import json
from datetime import datetime, timezone

from starlette.requests import Request
from starlette.routing import Route

from trafka.restproxy import answers, errors, formats, produce, streaming
from trafka.restproxy.v3 import cluster_id

TYPES = {"BINARY": "binary", "JSON": "json", "STRING": "string", "AVRO": "avro", "JSONSCHEMA": "jsonschema",
         "PROTOBUF": "protobuf"}
TYPE_NAMES = {fmt: name for name, fmt in TYPES.items()}


@functools.lru_cache(maxsize=256)  # a request's records mostly share their millisecond
def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def parse_timestamp(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    try:
        return int(datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        raise errors.RestError(400, 400, f"timestamp must be an ISO-8601 date-time: {value!r}") from None


STRATEGIES = ("TOPIC_NAME", "RECORD_NAME", "TOPIC_RECORD_NAME")


def _subject(broker, topic: str, part: dict, is_key: bool, fmt: str | None, text: str | None) -> str:
    """The subject a key or value's schema is under: `subject`, else its subject name strategy's
    (TOPIC_NAME: <topic>-key / -value; RECORD_NAME: the record's name; TOPIC_RECORD_NAME: both)."""
    if part.get("subject"):
        return str(part["subject"])
    strategy = str(part.get("subject_name_strategy") or "TOPIC_NAME").upper()
    if strategy not in STRATEGIES:
        raise errors.RestError(400, 400, f"Unknown subject_name_strategy {strategy}: one of {', '.join(STRATEGIES)}")
    if strategy == "TOPIC_NAME":
        return f"{topic}-{'key' if is_key else 'value'}"
    if text is not None:
        name = formats.record_name(broker, formats.REGISTRY_KINDS[fmt], text)
    elif part.get("schema_id") is not None:
        rec = formats.schema_record(broker, answers.integer(part["schema_id"], "schema_id"))
        name = formats.record_name(broker, rec.schema_type, rec.schema, rec.references)
    else:
        raise errors.RestError(400, 400, f"{strategy} needs the schema, its schema_id, or a subject")
    return name if strategy == "RECORD_NAME" else f"{topic}-{name}"


def _schema(broker, topic: str, part: dict, is_key: bool, fmt: str | None) -> formats.Schema | None:
    """The registered schema a key or value names (None when it names none and needs none)."""
    text = part.get("schema")
    if text is not None:
        if fmt not in ("avro", "jsonschema", "protobuf"):
            raise errors.RestError(400, 400, "A raw schema needs type AVRO, JSONSCHEMA or PROTOBUF")
        text = text if isinstance(text, str) else json.dumps(text)
    named = text is not None or part.get("schema_id") is not None or part.get("schema_version") is not None
    if not named and fmt not in ("avro", "jsonschema", "protobuf"):
        return None
    subject = _subject(broker, topic, part, is_key, fmt, text)
    if part.get("schema_id") is not None:
        schema = formats.by_id(broker, answers.integer(part["schema_id"], "schema_id"), subject)
    elif text is not None:
        schema = formats.register(broker, subject, fmt, text)
    else:
        version = part.get("schema_version")
        schema = formats.by_version(broker, subject, "latest" if version in (None, -1) else str(version))
    if fmt is not None and schema.fmt != fmt:
        raise errors.RestError(400, 400, f"Schema {schema.id} is {TYPE_NAMES[schema.fmt]}, not {TYPE_NAMES[fmt]}")
    return schema


def _encode(broker, topic: str, part, is_key: bool) -> tuple[bytes | None, dict | None]:
    """A key or value's bytes, and the answer's description of it (None: it was not given)."""
    if part is None:
        return None, None
    if not isinstance(part, dict):
        raise errors.RestError(400, 400, f"{'key' if is_key else 'value'} must be an object with type and data")
    kind = part.get("type")
    fmt = None
    if kind is not None:
        fmt = TYPES.get(str(kind).upper())
        if fmt is None:
            raise errors.RestError(400, 400, f"Unknown type {kind!r}: one of {', '.join(TYPES)}")
    schema = _schema(broker, topic, part, is_key, fmt)
    data = part.get("data")
    if schema is not None:
        fmt = schema.fmt
        encoded = formats.with_schema(schema, data)
    elif fmt in (None, "binary"):
        fmt, encoded = "binary", formats.binary(data)
    elif fmt == "json":
        encoded = formats.json_bytes(data)
    else:
        encoded = formats.string(data)
    described = {"type": TYPE_NAMES[fmt]}
    if schema is not None:
        described.update(subject=schema.subject, schema_id=schema.id, schema_version=schema.version)
        described = {k: v for k, v in described.items() if v is not None}
    described["size"] = 0 if encoded is None else len(encoded)
    return encoded, described


def _headers(raw) -> list:
    if raw is None:
        return []
    try:
        return [(str(h["name"]), formats.binary(h.get("value"))) for h in raw]
    except (KeyError, TypeError):
        raise errors.RestError(400, 400, "headers must be a list of {name, value}") from None


def _outgoing(broker, topic: str, record) -> tuple[produce.Outgoing, dict]:
    if isinstance(record, errors.RestError):
        raise record
    if not isinstance(record, dict):
        raise errors.RestError(400, 400, "A record must be a JSON object")
    partition = record.get("partition_id")
    key, key_shape = _encode(broker, topic, record.get("key"), True)
    value, value_shape = _encode(broker, topic, record.get("value"), False)
    out = produce.Outgoing(key, value, _headers(record.get("headers")), parse_timestamp(record.get("timestamp")),
                           None if partition is None else answers.integer(partition, "partition_id"))
    return out, {"key": key_shape, "value": value_shape}


async def _write(request, topic: str, incoming: list) -> list:
    """Each incoming record's answer: (a Written, the key's and value's description), or a RestError."""
    kafka = answers.client(request)
    try:
        count = await produce.partition_count(kafka, topic)
    except errors.RestError as refused:  # unknown topic, no DESCRIBE: each record's answer
        return [refused] * len(incoming)
    outgoing, shapes = [], []
    for record in incoming:
        try:
            item, shape = _outgoing(request.app.state.broker, topic, record)
        except errors.RestError as exc:
            item, shape = exc, None
        outgoing.append(item)
        shapes.append(shape)
    results = await produce.produce(kafka, topic, outgoing, count)
    return [r if isinstance(r, errors.RestError) else (r, shape) for r, shape in zip(results, shapes)]


def _written(cluster: str, topic: str, result, shape: dict) -> dict:
    return {"cluster_id": cluster, "topic_name": topic, "partition_id": result.partition, "offset": result.offset,
            "timestamp": iso(result.timestamp_ms), **{k: v for k, v in shape.items() if v is not None}}  # absent: out


class ProduceRecords:
    """POST .../records as an ASGI app: its answer starts before its body has all arrived."""

    async def __call__(self, scope, receive, send) -> None:
        request = Request(scope, receive)
        cluster = cluster_id(request)
        topic = request.path_params["topic"]

        async def answer(records: list) -> list:
            return [a.body() if isinstance(a, errors.RestError) else {"error_code": 200, **_written(cluster, topic, *a)}
                    for a in await _write(request, topic, records)]

        await streaming.serve(request, send, answer)


async def produce_batch(request):
    """POST .../records:batch: {"entries": [{"id", ...a record}]}, answered 207 with the
    entries written (`successes`) and refused (`failures`), each by its id."""
    cluster = cluster_id(request)
    topic = request.path_params["topic"]
    entries = (await answers.json_object(request)).get("entries")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise errors.RestError(400, 400, "entries must be a non-empty list of records, each with an id")
    ids = [e.get("id") for e in entries]
    if not all(isinstance(i, str) and 1 <= len(i) <= 80 for i in ids):
        raise errors.RestError(400, 400, "Each entry needs an id, a string of 1 to 80 characters")
    if len(set(ids)) != len(ids):
        raise errors.RestError(400, 400, "Entry ids must be distinct")
    successes, failures = [], []
    for entry_id, answer in zip(ids, await _write(request, topic, entries)):
        if isinstance(answer, errors.RestError):
            failures.append({"id": entry_id, **answer.body()})
        else:
            successes.append({"id": entry_id, **_written(cluster, topic, *answer)})
    return answers.v3({"successes": successes, "failures": failures}, 207)


def routes() -> list[Route]:
    return [Route("/v3/clusters/{cluster_id}/topics/{topic}/records", ProduceRecords(), methods=["POST"]),
            Route("/v3/clusters/{cluster_id}/topics/{topic}/records:batch", produce_batch, methods=["POST"])]
