"""Segment store: synchronous, knows record-batch headers and nothing else of the protocol.

Layout and recovery are described in docs/storage.md.
"""

from trafka.storage.cleaner import LogCleaner
from trafka.storage.clock import Clock, ManualClock, SystemClock
from trafka.storage.config import KAFKA_DEFAULTS, LogConfig, topic_defaults_from_broker, validate_topic_config
from trafka.storage.errors import (
    CorruptRecord,
    InvalidConfig,
    InvalidPartitions,
    InvalidProducerEpoch,
    InvalidRecord,
    InvalidTopic,
    LogClosed,
    OffsetOutOfRange,
    OutOfOrderSequence,
    RecordBatchTooLarge,
    RecordTooLarge,
    StorageError,
    TopicAlreadyExists,
    UnknownTopic,
)
from trafka.storage.log import AppendInfo, PartitionLog, ReadInfo, TimestampAndOffset
from trafka.storage.manager import LogManager, TopicMetadata, validate_topic_name
from trafka.storage.retention import apply_retention
from trafka.storage.segment import FileSlice, LogSegment

__all__ = [
    "AppendInfo", "Clock", "CorruptRecord", "FileSlice", "InvalidConfig", "InvalidPartitions",
    "InvalidProducerEpoch", "InvalidRecord", "InvalidTopic", "KAFKA_DEFAULTS", "LogClosed", "LogCleaner", "LogConfig",
    "LogManager", "LogSegment", "ManualClock", "OffsetOutOfRange", "OutOfOrderSequence", "PartitionLog",
    "ReadInfo", "RecordBatchTooLarge", "RecordTooLarge", "StorageError", "SystemClock", "TimestampAndOffset",
    "TopicAlreadyExists", "TopicMetadata", "UnknownTopic", "apply_retention", "topic_defaults_from_broker",
    "validate_topic_config", "validate_topic_name",
]
