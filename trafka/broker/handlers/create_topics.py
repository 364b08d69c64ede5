"""CreateTopics (key 19), versions 2-7.

Behavior:
- num_partitions -1 takes num.partitions; replication factor -1 takes default.replication.factor;
  more than the brokers (one, unless a simulated cluster) is INVALID_REPLICATION_FACTOR. Manual assignments are accepted when every replica
  list is exactly this broker; in a simulated cluster, one existing broker (the controller
  keeps the assignment).
- Topic configs are checked against Kafka's names, types and ranges: INVALID_CONFIG with a
  message naming the config otherwise.
- validate_only checks everything and creates nothing.
- v5+ responses carry the topic's resulting configs.
"""

from __future__ import annotations

from trafka.broker.requests import routes
from trafka.broker.cluster.describe import assign, assignment_problem, place, replication_factor_problem
from trafka.broker.security.authorizer import CLUSTER, TOPIC, Op, authorize
from trafka.broker.metadata.topic_configs import topic_config_entries
from trafka.broker.requests.errors import error_code
from trafka.storage import errors as storage_errors
from trafka.wire.errors import ErrorCode
from trafka.wire.types import ZERO_UUID


def topic_error(name: str, error: ErrorCode, message: str | None = None) -> dict:
    return {"name": name, "error_code": error, "error_message": message}


def _partition_count(broker, t) -> int | dict:
    if t.assignments:
        if t.num_partitions != -1 or t.replication_factor != -1:
            return topic_error(t.name, ErrorCode.INVALID_REQUEST, "give either assignments or partitions and replication factor")
        for a in t.assignments:
            problem = assignment_problem(broker, a.broker_ids)
            if problem is not None:
                return topic_error(t.name, ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem)
        if sorted(a.partition_index for a in t.assignments) != list(range(len(t.assignments))):
            return topic_error(t.name, ErrorCode.INVALID_REPLICA_ASSIGNMENT, "partitions must be numbered from 0")
        factors = {len(a.broker_ids) for a in t.assignments}
        if len(factors) > 1:  # as Kafka's controller refuses
            return topic_error(t.name, ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                               f"inconsistent replication factor between partitions: {sorted(factors)}")
        return len(t.assignments)
    problem = replication_factor_problem(broker, t.replication_factor)
    if problem is not None:
        return topic_error(t.name, ErrorCode.INVALID_REPLICATION_FACTOR, problem)
    if t.num_partitions == -1:
        return broker.config["num.partitions"]
    if t.num_partitions <= 0:
        return topic_error(t.name, ErrorCode.INVALID_PARTITIONS, "number of partitions must be larger than 0")
    return t.num_partitions


def replication_factor(broker, t) -> int:
    """The topic's replication factor, as the answer reports it."""
    if t.assignments:
        return len(t.assignments[0].broker_ids)
    return broker.config["default.replication.factor"] if t.replication_factor == -1 else t.replication_factor


FIRST_VERSION_WITH_CONFIGS = 5  # num_partitions, replication_factor and configs in the answer (KIP-525)


def _checked(broker, t, validate_only: bool, seen: set[str]) -> int | dict:
    """The topic's partition count, or its error answer (validate_only: every check done)."""
    if t.name in seen:
        return topic_error(t.name, ErrorCode.INVALID_REQUEST, "topic named twice in one request")
    seen.add(t.name)
    count = _partition_count(broker, t)
    if isinstance(count, dict) or not validate_only:
        return count
    try:
        broker.logs.validate_new_topic(t.name, count, {c.name: c.value for c in t.configs})
    except storage_errors.StorageError as exc:
        return topic_error(t.name, error_code(exc), str(exc))
    return count


def _created(broker, t, count: int, topic_id, config_entries) -> dict:
    configs = {c.name: c.value for c in t.configs}
    if topic_id != ZERO_UUID:
        try:
            place(broker, topic_id, range(count), t.replication_factor)
            assign(broker, topic_id, {a.partition_index: list(a.broker_ids) for a in t.assignments})
        except OSError as exc:
            return topic_error(t.name, ErrorCode.KAFKA_STORAGE_ERROR, f"cannot write topic metadata: {exc.strerror or exc}")
        except storage_errors.StorageError as exc:
            return topic_error(t.name, error_code(exc), str(exc))
    return {
        "name": t.name,
        "topic_id": topic_id,
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "num_partitions": count,
        "replication_factor": replication_factor(broker, t),
        "configs": config_entries(configs),
    }


def _config_entries(broker, version: int):
    """The answer's `configs` for a topic with these overrides: not built for versions without
    them, and built once per distinct set of overrides in a request (500 topics created alike
    share one list; the encoder only reads it)."""
    if version < FIRST_VERSION_WITH_CONFIGS:
        return lambda overrides: []
    built: dict[tuple, list[dict]] = {}

    def entries(overrides: dict[str, str]) -> list[dict]:
        key = tuple(sorted(overrides.items()))
        if key not in built:
            built[key] = [
                {"name": e.name, "value": e.value, "read_only": False, "config_source": e.source, "is_sensitive": False}
                for e in topic_config_entries(broker, overrides)
            ]
        return built[key]

    return entries


@routes.handles(19, min_version=2, max_version=7)
async def handle(ctx, request):
    broker = ctx.broker
    seen: set[str] = set()
    anywhere = authorize(ctx, Op.CREATE, CLUSTER, log_denied=False)  # else CREATE on each topic
    config_entries = _config_entries(broker, ctx.version)
    checked = [_checked(broker, t, request.validate_only, seen) if anywhere or authorize(ctx, Op.CREATE, TOPIC, t.name)
               else topic_error(t.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
               for t in request.topics]
    wanted = [(t, count) for t, count in zip(request.topics, checked) if not isinstance(count, dict)]
    ids: dict[str, object] = {}
    if not request.validate_only and wanted:
        try:
            # Every topic of the request in one durable batch of the metadata log, then made.
            made = broker.logs.create_topics([(t.name, count, {c.name: c.value for c in t.configs}) for t, count in wanted])
        except (storage_errors.StorageError, OSError) as exc:  # the metadata log refused the batch: none is made
            reason = exc.strerror or exc if isinstance(exc, OSError) else exc
            made = [storage_errors.StorageWriteFailed(f"cannot write topic metadata ({reason})")] * len(wanted)
        for (t, _), result in zip(wanted, made):
            ids[t.name] = result
    topics = []
    for t, count in zip(request.topics, checked):
        if isinstance(count, dict):
            topics.append(count)
            continue
        result = ids.get(t.name)
        if isinstance(result, storage_errors.StorageError):
            topics.append(topic_error(t.name, error_code(result), str(result)))
        else:
            topics.append(_created(broker, t, count, ZERO_UUID if result is None else result.topic_id, config_entries))
    return {"throttle_time_ms": 0, "topics": topics}
