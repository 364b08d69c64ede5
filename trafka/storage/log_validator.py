"""What a produce request's record batches must be before they are appended (the checks of
Kafka's LogValidator that need no decoding, plus keys on compacted topics)."""

from __future__ import annotations

from trafka.storage.config import LogConfig
from trafka.storage.errors import CorruptRecord, InvalidRecord, RecordBatchTooLarge, RecordTooLarge
from trafka.wire import records as rec


def validate_batches(data: bytearray, config: LogConfig, topic_partition: str) -> list[tuple[int, rec.BatchHeader]]:
    """(position, header) of each batch in `data`; raises CorruptRecord, InvalidRecord,
    RecordTooLarge or RecordBatchTooLarge for what Kafka refuses."""
    try:
        batches = list(rec.iter_batches(data))
    except rec.CorruptRecordError as exc:
        raise CorruptRecord(str(exc)) from None
    if not batches:
        raise InvalidRecord("the produce request holds no record batch")
    if len(data) > config.segment_bytes:
        raise RecordBatchTooLarge(f"{len(data)} bytes of records exceed segment.bytes {config.segment_bytes}")
    for pos, header in batches:
        if header.size > config.max_message_bytes:
            raise RecordTooLarge(f"batch of {header.size} bytes exceeds max.message.bytes {config.max_message_bytes}")
        if header.is_control:
            raise InvalidRecord("clients may not write control batches")
        if header.record_count < 1 or header.last_offset_delta != header.record_count - 1:
            raise InvalidRecord(
                f"batch has {header.record_count} records but an offset range of {header.last_offset_delta + 1}"
            )
        if config.compact:
            try:
                keyless = [i for i, r in enumerate(rec.decode_records(data, pos)) if r.key is None]
            except rec.CorruptRecordError as exc:
                raise CorruptRecord(str(exc)) from None
            if keyless:
                raise keyless_on_compacted(topic_partition, keyless)
    return batches


def keyless_on_compacted(topic_partition: str, indexes: list[int]) -> InvalidRecord:
    """One RecordError per keyless record, as Kafka's LogValidator answers."""
    message = f"Compacted topic cannot accept message without key in topic partition {topic_partition}."
    return InvalidRecord.for_records([(i, message) for i in indexes])
