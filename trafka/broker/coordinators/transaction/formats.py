"""Record formats of `__transaction_state`, Kafka's own layout (TransactionLogKey/Value).

A key is an int16 version (0) and the transactional id. A value is an int16 version and the
transaction's metadata. Version 1 is the same fields, flexible, with three tagged fields for
transaction version 2 (KIP-890): the producer id before the last transition (tag 0), the
producer id handed out when an EndTxn exhausts the epoch (tag 1) and the transaction version
the client began the transaction with (tag 2). As Kafka does, we write version 1 while
`transaction.version` >= 1 is finalized, and version 0 otherwise unless the record carries one
of the tagged values (a transaction begun under version 2 keeps its rules across a restart
even after the feature was lowered). A null value is a tombstone: the transactional id
expired. Compaction keeps the latest record per key, so the log replayed in order is the
coordinator's state.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from trafka.broker.coordinators.runtime.records import parse_versioned, versioned
from trafka.wire.schema import Array, Field, Message
from trafka.wire.types import INT8, INT16, INT32, INT64, STRING

TRANSACTION_LOG_KEY_VERSION = 0
TRANSACTION_LOG_VALUE_VERSION = 0
FLEXIBLE_VALUE_VERSION = 1
NO_PRODUCER_ID = -1

TRANSACTION_LOG_KEY = Message(
    "TransactionLogKey",
    versions="0",
    flexible="none",
    fields=[Field("transactional_id", STRING)],
)

TRANSACTION_LOG_VALUE = Message(
    "TransactionLogValue",
    versions="0-1",
    flexible="1+",
    fields=[
        Field("producer_id", INT64),
        Field("previous_producer_id", INT64, "1+", tag=0, tagged="1+", default=-1),
        Field("next_producer_id", INT64, "1+", tag=1, tagged="1+", default=-1),
        Field("producer_epoch", INT16),
        Field("transaction_timeout_ms", INT32),
        Field("transaction_status", INT8),
        Field(
            "transaction_partitions",
            Array([Field("topic", STRING), Field("partition_ids", Array(INT32))]),
            nullable="0+",
        ),
        Field("transaction_last_update_timestamp_ms", INT64),
        Field("transaction_start_timestamp_ms", INT64),
        Field("client_transaction_version", INT16, "1+", tag=2, tagged="1+", default=0),
    ],
)



class TxnState(enum.IntEnum):
    """Kafka's TransactionState, with the ids it writes in TransactionStatus."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        """The name DescribeTransactions / ListTransactions use (Kafka's TransactionState.name)."""
        return "".join(part.capitalize() for part in self.name.split("_"))


@dataclass(frozen=True)
class TxnRecord:
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: tuple[tuple[str, int], ...]
    last_update_ms: int
    start_ms: int
    previous_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID
    client_version: int = 0

    @property
    def needs_flexible(self) -> bool:
        """Whether version 0 would lose something (the tagged fields differ from their defaults)."""
        return self.client_version != 0 or self.next_producer_id != NO_PRODUCER_ID


def txn_key(transactional_id: str) -> bytes:
    return versioned(TRANSACTION_LOG_KEY, TRANSACTION_LOG_KEY_VERSION, {"transactional_id": transactional_id})


def txn_value(record: TxnRecord, flexible: bool = False) -> bytes:
    """The value record: version 1 when `flexible` (transaction.version >= 1 finalized) or when
    the record needs it, else version 0."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(record.partitions):
        by_topic.setdefault(topic, []).append(partition)
    body = {
        "producer_id": record.producer_id,
        "producer_epoch": record.producer_epoch,
        "transaction_timeout_ms": record.timeout_ms,
        "transaction_status": int(record.state),
        # Kafka writes null partitions for Empty and Complete* states.
        "transaction_partitions": [{"topic": t, "partition_ids": ps} for t, ps in by_topic.items()]
        if record.state not in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT) else None,
        "transaction_last_update_timestamp_ms": record.last_update_ms,
        "transaction_start_timestamp_ms": record.start_ms,
        "previous_producer_id": record.previous_producer_id,
        "next_producer_id": record.next_producer_id,
        "client_transaction_version": record.client_version,
    }
    version = FLEXIBLE_VALUE_VERSION if flexible or record.needs_flexible else TRANSACTION_LOG_VALUE_VERSION
    return versioned(TRANSACTION_LOG_VALUE, version, body)


def parse_txn_key(data: bytes) -> str:
    return parse_versioned(data, TRANSACTION_LOG_KEY).transactional_id


def parse_txn_value(data: bytes) -> TxnRecord:
    v = parse_versioned(data, TRANSACTION_LOG_VALUE)
    partitions = tuple(
        (t.topic, p) for t in (v.transaction_partitions or ()) for p in t.partition_ids
    )
    return TxnRecord(
        v.producer_id, v.producer_epoch, v.transaction_timeout_ms, TxnState(v.transaction_status), partitions,
        v.transaction_last_update_timestamp_ms, v.transaction_start_timestamp_ms,
        v.previous_producer_id, v.next_producer_id, v.client_transaction_version,
    )
