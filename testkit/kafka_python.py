"""Small kafka-python helpers for end-to-end tests: log offsets, reading a partition back."""

from __future__ import annotations

import time

from kafka import KafkaAdminClient, KafkaConsumer
from kafka.structs import TopicPartition


def admin_client(bootstrap: str) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap)


def offsets(bootstrap: str, topic: str, partitions: int) -> tuple[dict[int, int], dict[int, int]]:
    """(earliest, latest) per partition, through ListOffsets -2 and -1."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        earliest = consumer.beginning_offsets(tps)
        latest = consumer.end_offsets(tps)
        return {tp.partition: earliest[tp] for tp in tps}, {tp.partition: latest[tp] for tp in tps}
    finally:
        consumer.close()


def read_all(bootstrap: str, topic: str, partition: int = 0, timeout: float = 10.0) -> list:
    """Every record of the partition from the log start to the current log end offset (none for
    a topic the broker does not have)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest")
    try:
        if topic not in consumer.topics():
            return []
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        end = consumer.end_offsets([tp])[tp]
        consumer.seek_to_beginning(tp)
        records = []
        deadline = time.monotonic() + timeout
        while consumer.position(tp) < end:
            if time.monotonic() > deadline:
                raise AssertionError(f"read {len(records)} records, position {consumer.position(tp)} of {end}")
            for batch in consumer.poll(timeout_ms=200).values():
                records.extend(batch)
        return records
    finally:
        consumer.close()


def stored_values(bootstrap: str, topic: str, partition: int = 0) -> list[bytes]:
    """The values of `read_all`."""
    return [record.value for record in read_all(bootstrap, topic, partition)]
