"""Storage raises these. Each carries the Kafka error code a client is answered with
(`error_code`); the broker reads it through one function, trafka.broker.requests.errors.error_code."""

from __future__ import annotations

from trafka.wire.errors import ErrorCode


class StorageError(Exception):
    """Base of everything storage raises on purpose."""

    error_code = ErrorCode.UNKNOWN_SERVER_ERROR


class OffsetOutOfRange(StorageError):
    """OFFSET_OUT_OF_RANGE (1): below the log start offset or above the high watermark."""

    error_code = ErrorCode.OFFSET_OUT_OF_RANGE

    def __init__(self, offset: int, log_start_offset: int, log_end_offset: int):
        super().__init__(
            f"offset {offset} is outside [{log_start_offset}, {log_end_offset}]"
        )
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset


class CorruptRecord(StorageError):
    """CORRUPT_MESSAGE (2): a batch fails its magic, length or CRC check."""

    error_code = ErrorCode.CORRUPT_MESSAGE


class InvalidRecord(StorageError):
    """INVALID_RECORD (87): a well-formed batch that this log refuses (no key on a compacted
    topic, a control batch from a client, inconsistent record count). `record_errors` names the
    refused records, (index in the batch, message), as Kafka's ProduceResponse does (KIP-467)."""

    error_code = ErrorCode.INVALID_RECORD

    def __init__(self, message: str, record_errors: list[tuple[int, str]] = ()):
        super().__init__(message)
        self.record_errors = list(record_errors)

    @classmethod
    def for_records(cls, record_errors: list[tuple[int, str]]) -> "InvalidRecord":
        """Kafka's LogValidator answer for refused records: one RecordError each, and a message
        counting them and showing the first three."""
        shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in record_errors[:3])
        return cls(f"One or more records have been rejected due to {len(record_errors)} record errors in total, "
                   f"and only showing the first three errors at most: [{shown}]", record_errors)


class RecordTooLarge(StorageError):
    """MESSAGE_TOO_LARGE (10): one batch is bigger than max.message.bytes."""

    error_code = ErrorCode.MESSAGE_TOO_LARGE


class RecordBatchTooLarge(StorageError):
    """RECORD_LIST_TOO_LARGE (18): the whole append is bigger than segment.bytes."""

    error_code = ErrorCode.RECORD_LIST_TOO_LARGE


class OutOfOrderSequence(StorageError):
    """OUT_OF_ORDER_SEQUENCE_NUMBER (45): an idempotent producer skipped a sequence number."""

    error_code = ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


class InvalidProducerEpoch(StorageError):
    """INVALID_PRODUCER_EPOCH (47): the batch's producer epoch is older than the current one."""

    error_code = ErrorCode.INVALID_PRODUCER_EPOCH


class InvalidTxnState(StorageError):
    """INVALID_TXN_STATE (48): a producer's batch does not fit its transaction (a non-transactional
    batch while one is open)."""

    error_code = ErrorCode.INVALID_TXN_STATE


class UnknownTopic(StorageError):
    """UNKNOWN_TOPIC_OR_PARTITION (3)."""

    error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


class TopicAlreadyExists(StorageError):
    """TOPIC_ALREADY_EXISTS (36)."""

    error_code = ErrorCode.TOPIC_ALREADY_EXISTS


class InvalidTopic(StorageError):
    """INVALID_TOPIC_EXCEPTION (17): an illegal topic name."""

    error_code = ErrorCode.INVALID_TOPIC_EXCEPTION


class InvalidPartitions(StorageError):
    """INVALID_PARTITIONS (37): partition count below 1 or not above the current count."""

    error_code = ErrorCode.INVALID_PARTITIONS


class InvalidConfig(StorageError):
    """INVALID_CONFIG (40): an unknown topic config name or a value of the wrong type."""

    error_code = ErrorCode.INVALID_CONFIG


class LogClosed(StorageError):
    """KAFKA_STORAGE_ERROR (56): the log was closed or deleted under the caller."""

    error_code = ErrorCode.KAFKA_STORAGE_ERROR


class StorageWriteFailed(StorageError):
    """KAFKA_STORAGE_ERROR (56): the disk refused a write (full, I/O error, read-only file
    system). Nothing of the refused batch stays in the log; reads go on; a later append that
    fits succeeds."""

    error_code = ErrorCode.KAFKA_STORAGE_ERROR

    def __init__(self, message: str, errno: int | None = None):
        super().__init__(message)
        self.errno = errno
