"""One mapping from storage errors (and I/O errors, and bugs) to Kafka error codes."""

import pytest

from trafka.broker.requests.errors import coordinator_write_error, error_code
from trafka.storage import errors as storage_errors
from trafka.wire.errors import ErrorCode

STORAGE_ERRORS = [
    cls for cls in vars(storage_errors).values()
    if isinstance(cls, type) and issubclass(cls, storage_errors.StorageError) and cls is not storage_errors.StorageError
]


@pytest.mark.parametrize("cls", STORAGE_ERRORS, ids=lambda cls: cls.__name__)
def test_each_storage_error_answers_the_code_its_docstring_names(cls):
    documented = cls.__doc__.split()[0]
    assert cls.error_code.name == documented
    assert error_code(cls.__new__(cls)) == ErrorCode[documented]


def test_a_closed_log_is_a_storage_error_not_an_unknown_partition():
    assert error_code(storage_errors.LogClosed("log t-0 is closed")) == ErrorCode.KAFKA_STORAGE_ERROR


def test_io_errors_and_bugs():
    assert error_code(OSError(28, "No space left on device")) == ErrorCode.KAFKA_STORAGE_ERROR
    assert error_code(KeyError("x")) == ErrorCode.UNKNOWN_SERVER_ERROR
    assert error_code(storage_errors.StorageError("?")) == ErrorCode.UNKNOWN_SERVER_ERROR


@pytest.mark.parametrize(("exc", "offsets", "expected"), [
    (storage_errors.UnknownTopic("gone"), False, ErrorCode.COORDINATOR_NOT_AVAILABLE),
    (storage_errors.StorageWriteFailed("full"), False, ErrorCode.NOT_COORDINATOR),
    (storage_errors.LogClosed("closed"), True, ErrorCode.NOT_COORDINATOR),
    (storage_errors.RecordTooLarge("big"), True, ErrorCode.INVALID_COMMIT_OFFSET_SIZE),
    (storage_errors.RecordTooLarge("big"), False, ErrorCode.UNKNOWN_SERVER_ERROR),
])
def test_coordinator_writes_map_as_kafkas_group_metadata_manager(exc, offsets, expected):
    assert coordinator_write_error(exc, offsets=offsets) == expected
