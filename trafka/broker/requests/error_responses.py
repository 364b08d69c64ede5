"""Any API's error response, built from its message declaration (for injected faults).

`error_response(api, version, request, error)` walks the response declaration: every
`error_code` field gets the error, every array of structs mirrors the request array whose
entries share the most key fields (topic name or id, partition index, group id...), so a
partitioned API answers each requested partition with the error, as Kafka would. Everything
else takes its declared default; record sets are empty, never null.
"""

from __future__ import annotations

from trafka.wire.schema import Array, Field

# Requests and responses name the same key differently (Fetch's `partition` is its
# response's `partition_index`, Produce's partitions are `index`).
_CANONICAL = {"topic": "name", "partition": "partition_index", "index": "partition_index"}


def _canon(name: str) -> str:
    return _CANONICAL.get(name, name)


def _present(fields: list[Field], version: int) -> list[Field]:
    return [f for f in fields if f.present_in(version)]


def _scalar_names(fields: list[Field], version: int) -> set[str]:
    return {_canon(f.name) for f in _present(fields, version) if not isinstance(f.type, (Array, list))}


def _plain_key_field(fields: list[Field], version: int, value) -> str | None:
    """The response field a request's list of plain values maps to: names (group ids, topic
    names) to the first string field, integers (AddPartitionsToTxn v0-3, OffsetFetch v0-7,
    DescribeProducers, ElectLeaders...) to the partition index."""
    for f in _present(fields, version):
        if isinstance(value, str) and getattr(f.type, "name", None) in ("string", "compact_string") \
                and f.name != "error_message":
            return f.name
        if isinstance(value, int) and _canon(f.name) == "partition_index":
            return f.name
    return None


def _is_error_field(name: str) -> bool:
    return name == "error_code" or name.endswith("_error_code")


def _mirror_source(item_fields: list[Field], version: int, request) -> list[dict]:
    """The request entries a response array answers, each as {canonical key: value}."""
    wanted = _scalar_names(item_fields, version)
    best, best_score = [], 0.0
    for value in (request or {}).values():
        if not isinstance(value, list) or not value:
            continue
        first = value[0]
        if isinstance(first, dict):
            score = len(wanted & {_canon(k) for k in first})
            entries = value
        else:
            target = _plain_key_field(item_fields, version, first)
            score = 0.5 if target else 0
            entries = [{target: v} for v in value]
        if score > best_score:
            best, best_score = entries, score
    return best


def _build(fields: list[Field], version: int, flexible: bool, source, error: int) -> dict:
    known = {_canon(k): v for k, v in (source or {}).items()} if source else {}
    out: dict = {}
    for f in _present(fields, version):
        if isinstance(f.type, Array) and isinstance(f.type.item, list):
            out[f.name] = [
                _build(f.type.item, version, flexible, entry, error)
                for entry in _mirror_source(f.type.item, version, source)
            ]
        elif isinstance(f.type, list):
            out[f.name] = _build(f.type, version, flexible, None, error)
        elif _is_error_field(f.name):
            out[f.name] = error
        elif _canon(f.name) in known and not isinstance(known[_canon(f.name)], (list, dict)):
            out[f.name] = known[_canon(f.name)]
        elif getattr(f.type, "name", None) == "records":
            out[f.name] = b""
        else:
            out[f.name] = f.default_for(version)
    return out


def error_response(api, version: int, request, error: int) -> dict:
    """The response body of `api` at `version` answering `request` with `error` everywhere."""
    message = api.response
    return _build(message.fields, version, message.is_flexible(version), request, int(error))
