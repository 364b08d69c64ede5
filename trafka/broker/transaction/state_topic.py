"""`__transaction_state`: where the transaction coordinator writes each transactional id's
metadata, replayed at start-up.

Created at start-up if missing: compacted, transaction.state.log.num.partitions partitions
(Kafka: 50) of transaction.state.log.segment.bytes segments. A transactional id lives in
partition abs(hashCode(id)) % partitions, as in Kafka. Writes are synchronous appends: a
state change is answered only after its record is in the log.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterator

import construct

from trafka.broker.coordinator.formats import partition_for
from trafka.broker.transaction.formats import TxnRecord, UnknownRecord, parse_txn_key, parse_txn_value
from trafka.storage.inspect import replay_topic
from trafka.storage.log import replay_log
from trafka.wire import records as rec

log = logging.getLogger("trafka.transaction")

TRANSACTION_STATE_TOPIC = "__transaction_state"


class TransactionStateTopic:
    def __init__(self, logs, wanted_partitions: int, segment_bytes: int, clock):
        self.logs = logs
        self.clock = clock
        configs = {"cleanup.policy": "compact", "segment.bytes": str(segment_bytes)}
        self.partitions = logs.ensure_topic(TRANSACTION_STATE_TOPIC, wanted_partitions, configs).partitions

    def partition_for(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.partitions)

    def append(self, transactional_id: str, key: bytes, value: bytes | None) -> None:
        """Write one record; raises the storage errors of PartitionLog.append."""
        batch = rec.encode_batch([rec.Record(key, value, (), self.clock.time_ms())])
        self.logs.log(TRANSACTION_STATE_TOPIC, self.partition_for(transactional_id)).append(batch)

    def replay(self) -> Iterator[tuple[str, TxnRecord | None]]:
        for partition in range(self.partitions):
            yield from replay_log(self.logs.log(TRANSACTION_STATE_TOPIC, partition),
                                  lambda data, offset: _entries(data, offset, partition))


def replay_data_dir(data_dir: Path) -> Iterator[tuple[str, TxnRecord | None]]:
    """What `replay` yields, read from a data directory's segment files read-only (for
    `trafka transactions`, beside a running broker or not)."""
    return replay_topic(Path(data_dir), TRANSACTION_STATE_TOPIC, _entries)


def _entries(data: bytes, offset: int, partition: int):
    for pos, header in rec.iter_batches(data, validate=False):
        if not header.is_control:
            for record in rec.decode_records(data, pos):
                if record.offset < offset or record.key is None:
                    continue
                try:
                    transactional_id = parse_txn_key(record.key)
                    yield transactional_id, None if record.value is None else parse_txn_value(record.value)
                except (UnknownRecord, ValueError, construct.ConstructError) as exc:
                    log.warning("%s-%d offset %d: skipping record: %s", TRANSACTION_STATE_TOPIC, partition, record.offset, exc)
        offset = header.next_offset
    return offset
