"""Produce (key 0), versions 3-13 served; 0-2 advertised and answered with UNSUPPORTED_VERSION.

Behavior:
- Advertised from v0 as Kafka 4.x does: librdkafka turns compression off unless it sees v0.
  v0-2 carry the pre-2017 message formats, which trafka does not store.
- acks=0 gets no response; acks=1 and acks=all are the same on one broker: the batch is
  written to the segment file (handed to the OS) before the response is sent.
- Topics are not created here (as in Kafka: Metadata creates them).
- Transactional produce (a transactional id in the request) is checked with the transaction
  coordinator first, as Kafka's transaction verification does: the epoch must be current (else
  INVALID_PRODUCER_EPOCH, Kafka's answer to the coordinator's PRODUCER_FENCED) and the partition
  in the producer's open transaction. A partition that is not is answered by version as Kafka's
  KafkaApis/AddPartitionsToTxnManager do: v3-10 INVALID_TXN_STATE with the message "Partition was
  not added to the transaction" (older clients do not know the newer error), v11
  TRANSACTION_ABORTABLE (KIP-890 part 1: the producer aborts and goes on), v12+ adds it (below). A non-transactional batch of a producer with an open transaction
  is INVALID_TXN_STATE; a transactional batch without a transactional id in the request is
  INVALID_RECORD (no coordinator could ever end its transaction).
- `__consumer_offsets` is written by the group coordinator only: INVALID_TOPIC_EXCEPTION, as
  in Kafka.
- A disk that refuses the write (full, EIO, read-only) is KAFKA_STORAGE_ERROR for that
  partition's batch, which is cut back from the log; the connection stays open.
- Idempotence: a duplicate batch is answered with the offsets it got the first time; a
  sequence gap is OUT_OF_ORDER_SEQUENCE_NUMBER.
- v13 names topics by id: an id no topic has is UNKNOWN_TOPIC_ID, as in Kafka (WRITE is checked
  on the topic the id names). The v10+ leader hints (current_leader, node_endpoints) stay
  empty: no answer is ever NOT_LEADER_OR_FOLLOWER.
- Broker-side schema validation (Confluent Server's topic configs
  confluent.key.schema.validation / confluent.value.schema.validation): every record's key or
  value must start with magic byte 0 and the id of a schema the built-in registry holds; the
  batch is refused with INVALID_RECORD and one record error per record that is not
  (docs/schema-registry.md). A null key or value (a tombstone) passes.
- transaction.partition.verification.enable=false (dynamic, as in Kafka) turns the check off
  for v3-11: the batch is appended without asking the coordinator, so a partition the producer
  never added gets no marker (the hanging transaction the check exists to prevent). v12+ still
  asks the coordinator, which adds the partition, as Kafka's ReplicaManager does.
- v12+ is how a transaction version 2 producer (KIP-890 part 2) writes: a transactional batch
  for a partition not in the transaction adds it (starting the transaction if none is open),
  as Kafka's verification asks its coordinator to (docs/transactions.md). Below v12 the
  partition must have been added with AddPartitionsToTxn (else the error above). Java 4.x
  sends v12+ only while transaction.version 2 is finalized.
"""

from __future__ import annotations

import logging

import trio

from trafka.broker.requests import routes
from trafka.broker.security.authorizer import TOPIC, TRANSACTIONAL_ID, Op, authorize
from trafka.broker.coordinators.runtime.internal_topic import INTERNAL_TOPICS
from trafka.broker.requests.errors import error_code
from trafka.broker.operations.log_tasks import flush_off_loop, load_off_loop
from trafka.broker.requests.topics import find_log, led_elsewhere, topic_name
from trafka.storage import errors as storage_errors
from trafka.wire import records as rec
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.broker")

FIRST_RECORD_BATCH_VERSION = 3
FIRST_VERSION_WITH_TOPIC_IDS = 13
FIRST_ABORTABLE_VERSION = 11  # TRANSACTION_ABORTABLE for an unverified partition (KIP-890 part 1)
FIRST_IMPLICIT_ADD_VERSION = 12  # transaction version 2 (KIP-890 part 2)
NOT_ADDED = "Partition was not added to the transaction"

# What a storage refusal means on the wire.


def partition_error(index: int, error: ErrorCode, message: str | None = None) -> dict:
    return {"index": index, "error_code": error, "base_offset": -1, "error_message": message}


def _verify_transaction(broker, transactional_id: str, topic_name: str, index: int, records, version: int) -> dict | None:
    """None when the batches may be appended, else the partition's error entry."""
    try:
        batches = list(rec.iter_batches(records, validate=False))
    except rec.CorruptRecordError:
        return None  # the log's own validation answers CORRUPT_MESSAGE
    for _, header in batches:
        if not header.is_transactional:
            return partition_error(index, ErrorCode.INVALID_REQUEST)
        coordinator = broker.txn_coordinator_for(transactional_id)
        if coordinator is None:  # in a simulated cluster, its partition has no leader just now
            return partition_error(index, ErrorCode.NOT_ENOUGH_REPLICAS)
        error = coordinator.verify_produce(
            transactional_id, header.producer_id, header.producer_epoch, topic_name, index,
            add=version >= FIRST_IMPLICIT_ADD_VERSION,
        )
        if error == ErrorCode.INVALID_TXN_STATE:  # not in the transaction: what this version's clients know
            if version >= FIRST_ABORTABLE_VERSION:
                return partition_error(index, ErrorCode.TRANSACTION_ABORTABLE)
            return partition_error(index, error, NOT_ADDED)
        if error:
            return partition_error(index, error)
    return None


def _verifies(broker, version: int) -> bool:
    """Whether a transactional produce goes to the coordinator first: always from v12 (it adds
    the partition), below only with transaction.partition.verification.enable, as Kafka's
    ReplicaManager decides."""
    return version >= FIRST_IMPLICIT_ADD_VERSION or broker.config["transaction.partition.verification.enable"]


def _starts_transactional(records) -> bool:
    try:
        return rec.parse_header(records, 0).is_transactional
    except (rec.CorruptRecordError, IndexError, ValueError):
        return False  # the log's own validation answers


def _append(broker, topic_name: str, partition: dict, transactional_id: str | None, version: int,
            flushes: list, replicated: list | None = None) -> dict:
    """`replicated`: with acks=all, where a replicated partition's (log, last offset, answer)
    goes for `_await_replication`."""
    index = partition.index
    if topic_name in INTERNAL_TOPICS:
        return partition_error(index, ErrorCode.INVALID_TOPIC_EXCEPTION, f"clients may not write to internal topic {topic_name}")
    if led_elsewhere(broker, topic_name, index):
        return partition_error(index, ErrorCode.NOT_LEADER_OR_FOLLOWER)
    log_ = find_log(broker, topic_name, index)
    if log_ is None:
        return partition_error(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if replicated is not None and (isr := _in_sync(broker, topic_name, index)) is not None:
        if len(isr) < log_.config.min_insync_replicas:  # Kafka refuses before appending
            return partition_error(index, ErrorCode.NOT_ENOUGH_REPLICAS,
                                   f"{len(isr)} in-sync replicas, min.insync.replicas is {log_.config.min_insync_replicas}")
    if not partition.records:
        return partition_error(index, ErrorCode.INVALID_RECORD, "no record batches")
    if transactional_id is not None:
        refusal = _verify_transaction(broker, transactional_id, topic_name, index, partition.records, version) \
            if _verifies(broker, version) else None
        if refusal is not None:
            return refusal
    elif _starts_transactional(partition.records):
        # No coordinator would ever end this transaction: the last stable offset would stop here.
        return partition_error(index, ErrorCode.INVALID_RECORD, "transactional batches need the request's transactional id")
    try:
        validate_key, validate_value = log_.config.schema_validation
        if validate_key or validate_value:
            _validate_schema_ids(broker, topic_name, partition.records, validate_key, validate_value)
        # A duplicate from an idempotent producer comes back with its original offsets.
        info = log_.append(partition.records, defer_flush=True)
    except storage_errors.StorageError as exc:
        refused = partition_error(index, error_code(exc), str(exc))
        refused["record_errors"] = [{"batch_index": i, "batch_index_error_message": message}
                                    for i, message in getattr(exc, "record_errors", ())]
        return refused
    answer = {
        "index": index,
        "error_code": ErrorCode.NONE,
        "base_offset": info.base_offset,
        "log_append_time_ms": info.log_append_time,
        "log_start_offset": info.log_start_offset,
    }
    if log_.flush_due():  # flush.messages / flush.ms: on disk before the answer, fsynced off the loop
        flushes.append((log_, answer))
    if replicated is not None and isr is not None:
        replicated.append((log_, info.last_offset, answer, topic_name, _leader_epoch(broker, topic_name, index)))
    return answer


def _in_sync(broker, topic: str, partition: int) -> tuple[int, ...] | None:
    """The ISR of a partition with more than one replica, else None."""
    metadata = broker.logs.topics.get(topic)
    state = broker.cluster.controller.partition(metadata.topic_id, partition)
    return state.isr if len(state.replicas) > 1 else None


def _leader_epoch(broker, topic: str, partition: int) -> int | None:
    """The partition's leader epoch while this broker leads it, else None."""
    metadata = broker.logs.topics.get(topic)
    if metadata is None:
        return None
    state = broker.cluster.controller.partition(metadata.topic_id, partition)
    return state.leader_epoch if state.leader == broker.node_id else None


async def _await_replication(broker, replicated: list, timeout_ms: int) -> None:
    """acks=all: each answer waits until the in-sync replicas have its batches (the high
    watermark passes them), at most the request's timeout (REQUEST_TIMED_OUT after, as
    Kafka's delayed produce); NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below
    min.insync.replicas meanwhile; NOT_LEADER_OR_FOLLOWER when the leadership moved (the
    leader epoch changed) meanwhile, since what is at those offsets now may be another batch."""
    def waiting(log_, last, topic, answer, epoch) -> bool:
        return log_.high_watermark <= last and _leader_epoch(broker, topic, answer["index"]) == epoch

    with trio.move_on_after(max(timeout_ms, 0) / 1000):
        while any(waiting(log_, last, topic, answer, epoch) for log_, last, answer, topic, epoch in replicated):
            await broker.wait_for_data()
    for log_, last, answer, topic, epoch in replicated:
        if answer["error_code"] != ErrorCode.NONE:
            continue
        if _leader_epoch(broker, topic, answer["index"]) != epoch:
            answer.update(partition_error(answer["index"], ErrorCode.NOT_LEADER_OR_FOLLOWER,
                                          "the partition's leadership moved while the batch waited for its replicas"))
        elif log_.high_watermark <= last:
            answer.update(partition_error(answer["index"], ErrorCode.REQUEST_TIMED_OUT,
                                          "the in-sync replicas did not all get the batch in time"))
        elif len(_in_sync(broker, topic, answer["index"]) or ()) < log_.config.min_insync_replicas:
            answer.update(partition_error(answer["index"], ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND))


def _validate_schema_ids(broker, topic_name: str, data, keys: bool, values: bool) -> None:
    """Raise InvalidRecord naming each record (by its index in its batch) whose key or value is
    not framed with a schema id the registry knows, as Confluent Server refuses it."""
    known = broker.schema_registry().state.by_id
    errors: list[tuple[int, str]] = []
    try:
        for pos, _ in rec.iter_batches(data):
            for i, record in enumerate(rec.decode_records(data, pos)):
                for what, field, wanted in (("key", record.key, keys), ("value", record.value, values)):
                    if not wanted or field is None:
                        continue
                    if len(field) < 5 or field[0] != 0:
                        errors.append((i, f"The {what} is not framed with a schema id (magic byte 0, then a "
                                          f"4-byte schema id) as {topic_name} requires"))
                    elif int.from_bytes(field[1:5], "big") not in known:
                        errors.append((i, f"The {what}'s schema id {int.from_bytes(field[1:5], 'big')} is not "
                                          "registered in the schema registry"))
    except rec.CorruptRecordError as exc:
        raise storage_errors.CorruptRecord(str(exc)) from None
    if errors:
        raise storage_errors.InvalidRecord.for_records(errors)


async def _flush(broker, flushes: list) -> None:
    for log_, answer in flushes:
        try:
            await flush_off_loop(broker, log_)
        except OSError as exc:
            # The batch is written (in the page cache) but flush.messages/flush.ms asked for it on
            # disk before the answer: the producer hears that it may not be.
            failed = storage_errors.StorageWriteFailed(f"cannot flush {log_.directory}: {exc.strerror or exc}", exc.errno)
            answer.update(partition_error(answer["index"], error_code(failed), str(failed)))


def _respond(request, per_partition, names=None) -> dict:
    """One response entry per requested topic. `names` are the topics' names (default: as the
    request names them); a None name (an unknown topic id) is UNKNOWN_TOPIC_ID per partition."""
    responses = []
    for topic, name in zip(request.topic_data, names or [t.name for t in request.topic_data]):
        if name is None:
            partitions = [partition_error(p.index, ErrorCode.UNKNOWN_TOPIC_ID) for p in topic.partition_data]
        else:
            partitions = [per_partition(name, p) for p in topic.partition_data]
        responses.append({"name": topic.name, "topic_id": topic.topic_id, "partition_responses": partitions})
    return {"responses": responses, "throttle_time_ms": 0}


@routes.handles(0, min_version=0, max_version=13)
async def handle(ctx, request):
    if ctx.version < FIRST_RECORD_BATCH_VERSION:
        return _respond(request, lambda _, p: partition_error(p.index, ErrorCode.UNSUPPORTED_VERSION))
    if request.acks not in (-1, 0, 1):
        return _respond(request, lambda _, p: partition_error(p.index, ErrorCode.INVALID_REQUIRED_ACKS))
    txn_id = request.transactional_id
    if txn_id is not None and not authorize(ctx, Op.WRITE, TRANSACTIONAL_ID, txn_id):
        response = _respond(request, lambda _, p: partition_error(p.index, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
        return None if request.acks == 0 else response
    by_id = ctx.version >= FIRST_VERSION_WITH_TOPIC_IDS
    names = [topic_name(ctx.broker, t.name, t.topic_id, by_id=by_id) for t in request.topic_data]
    refused = {name for name in names if name is not None and not authorize(ctx, Op.WRITE, TOPIC, name)}
    await load_off_loop(ctx.broker, [(name, p.index) for t, name in zip(request.topic_data, names)
                                     if name is not None and name not in refused for p in t.partition_data])
    flushes: list = []
    replicated = [] if request.acks == -1 else None
    response = _respond(request, lambda name, p: partition_error(p.index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                        if name in refused else _append(ctx.broker, name, p, txn_id, ctx.version, flushes, replicated),
                        names)
    ctx.broker.notify_data_arrived()
    await _flush(ctx.broker, flushes)
    if replicated:
        await _await_replication(ctx.broker, replicated, request.timeout_ms)
    return None if request.acks == 0 else response
